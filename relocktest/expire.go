package relocktest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/layout"
)

// errNoLease is ExpireNow's error for a name with nothing leased.
var errNoLease = errors.New("no lock hash, election or held permit under this name (a semaphore's permits and a latch's count have no lease)")

const (
	// listenWait bounds how long ExpireNow waits for a Kit client that
	// holds locks to listen for notices: it subscribes in the
	// background after its first hold.
	listenWait = 2 * time.Second
	// listenPoll is how often ExpireNow looks meanwhile.
	listenPoll = 5 * time.Millisecond
	// maxReadHolds bounds the read holds ExpireNow deletes per reader.
	maxReadHolds = 1 << 16
)

// ExpireNow makes the leases under name run out now, as if their holders
// had stopped renewing, and has relock tell the holders: their lock (or
// permit, or leadership) contexts are cancelled with a cause matching
// relock.ErrLockLost. name is what was given to the lock's, the
// semaphore's or the election's constructor:
//
//   - a lock's record (reentrant, fair, spin, non-reentrant, a
//     read/write lock's hash and its read holds, a RedLock's record on
//     this server, a MultiLock's member) is deleted, as its expiry
//     would; a fair lock's queue stays;
//   - every permit held of a permits.Semaphore expires now on the
//     server's clock, to be reclaimed by the next call that looks;
//   - an election's lock is deleted: the leader loses its leadership.
//
// The holders are told by relock's force-unlock notice, which has each
// hold on name renewed (or, with a fixed lease, read) at once, so they
// learn within a round trip; the cause's text names that notice. A
// client listens for notices once it has held a lock of the lock
// packages or a permit; a RedLock's holder on a client that has held
// neither learns as from a real expiry, at its watchdog's next round (a
// third of the lease at most).
// ExpireNow returns once the Kit's clients that hold locks have heard the
// notice (waiting up to 2s for one that has just begun to listen);
// other relock clients named in a lock's record are sent it too.
// Waiters are not woken, as by an expiry. ExpireNow returns an error
// when nothing under name has a lease.
func (k *Kit) ExpireNow(ctx context.Context, name string) error {
	if k == nil {
		return errNil
	}
	lock, ids, err := k.expire(ctx, name)
	if err != nil {
		return fmt.Errorf("relocktest: ExpireNow(%q): %w", name, err)
	}
	if err := k.notify(ctx, lock, ids); err != nil {
		return fmt.Errorf("relocktest: ExpireNow(%q): %w", name, err)
	}
	return nil
}

// expire removes what name's leases keep, and returns the name the
// holds are recorded under and the ids of the clients named in the
// record.
func (k *Kit) expire(ctx context.Context, name string) (lock string, ids []string, err error) {
	for _, key := range []string{name, layout.ElectionLock(name)} {
		typ, err := k.direct.Type(ctx, key).Result()
		if err != nil {
			return "", nil, err
		}
		if typ == "hash" {
			ids, err := k.expireHash(ctx, key)
			return key, ids, err
		}
	}
	permits := layout.PermitTimeouts(name)
	held, err := k.direct.ZRange(ctx, permits, 0, -1).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", nil, err
	}
	if len(held) == 0 {
		return "", nil, errNoLease
	}
	members := make([]redis.Z, len(held))
	for i, m := range held {
		members[i] = redis.Z{Member: m} // score 0: expired at the epoch
	}
	return name, nil, k.direct.ZAddXX(ctx, permits, members...).Err()
}

// expireHash deletes the lock hash key and, for a read/write lock, its
// readers' read holds, and returns the client ids of the hash's owner
// fields ("<id>:<owner>", a writer's "<id>:<owner>:write").
func (k *Kit) expireHash(ctx context.Context, key string) ([]string, error) {
	fields, err := k.direct.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, err
	}
	_, rw := fields["mode"]
	dels := []string{key}
	var ids []string
	for f, v := range fields {
		if len(f) < 38 || f[36] != ':' {
			continue // "mode", or not a relock or Redisson owner
		}
		ids = append(ids, f[:36])
		if !rw || strings.HasSuffix(f, ":write") {
			continue
		}
		n, _ := strconv.Atoi(v)
		for i := 1; i <= min(n, maxReadHolds); i++ {
			dels = append(dels, layout.ReadTimeoutPrefix(key, f)+":"+strconv.Itoa(i))
		}
	}
	return ids, k.direct.Del(ctx, dels...).Err()
}

// notify sends the force-unlock notice for lock to the clients ids and
// to the Kit's clients.
func (k *Kit) notify(ctx context.Context, lock string, ids []string) error {
	k.mu.Lock()
	clients := []*relock.Client{k.client}
	for _, p := range k.peers {
		clients = append(clients, p.rc)
	}
	k.mu.Unlock()
	told := make(map[string]bool)
	for _, rc := range clients {
		told[rc.ID()] = true
		if err := k.tell(ctx, rc, lock); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if told[id] {
			continue
		}
		told[id] = true
		if err := k.direct.Publish(ctx, layout.ClientChannel(id), lock).Err(); err != nil {
			return err
		}
	}
	return nil
}

// tell sends rc the notice for lock, again until rc listens if it holds
// locks (within listenWait): a client that holds none has nothing to be
// told.
func (k *Kit) tell(ctx context.Context, rc *relock.Client, lock string) error {
	deadline := time.Now().Add(listenWait)
	for {
		n, err := k.direct.Publish(ctx, layout.ClientChannel(rc.ID()), lock).Result()
		if err != nil || n > 0 || rc.Stats().Holds == 0 || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(listenPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}
