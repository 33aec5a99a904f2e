package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestSentinel runs locks through failover clients (redis.NewFailoverClient)
// on a master with two replicas watched by three sentinels: a lock, a
// wait and a wake-up work, the failover window is recorded, and the same
// clients work again with the promoted master.
func TestSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	holder := newClient(t, s.Client(t), nil)
	waiter := newClient(t, s.Client(t), nil)

	t.Run("LockWaitWake", func(t *testing.T) { lockWaitWake(t, s, holder, waiter) })
	t.Run("Pipelined", func(t *testing.T) { sentinelPipelined(t, s) })
	t.Run("WindowWithSyncOff", func(t *testing.T) { lossWindow(t, s) })
	t.Run("FailoverWithDefaults", func(t *testing.T) {
		// Default options sync with the replicas: the acquire's
		// connection carries WAIT 2 (the master reports two replicas),
		// so the acquire returns only once a replica has it, and the
		// sentinels promote the replica furthest along.
		w := failoverWindow(t, s, nil)
		if !w.survived {
			t.Fatalf("lock taken with default options lost in the failover to %s", w.promoted)
		}
	})
	// The clients' connections, subscription hub included, follow the
	// master the sentinels promoted.
	t.Run("LockWaitWakeAfterFailover", func(t *testing.T) { lockWaitWake(t, s, holder, waiter) })
}

// lockWaitWake takes a lock on holder, has waiter wait for it (subscribed
// on the master: failover clients use global pub/sub), releases it, and
// checks that the waiter is woken at once and the lock ends up deleted.
func lockWaitWake(t *testing.T, s *redistest.Sentinel, holder, waiter *relock.Client) {
	ctx := context.Background()
	master, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	node := s.Node(master).Client(t)
	name := redistest.Key(t)
	// The waiter listens on its client's channel.
	channel := "redisson_lock__channel:{" + name + "}:" + waiter.ID()

	hmu := reentrant.New(holder, name, nil)
	hctx, err := hmu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if fields := node.HGetAll(ctx, name).Val(); len(fields) != 1 {
		t.Fatalf("lock on the master %s: %v, want one holder field", master, fields)
	}
	acquired, _ := waiting(t, reentrant.New(waiter, name, nil))
	redistest.Eventually(t, wait, "waiter subscribed on the master", func() bool {
		return node.PubSubNumSub(ctx, channel).Val()[channel] == 1
	})
	time.Sleep(50 * time.Millisecond) // let the waiter's retry after subscribing land
	released := time.Now()
	if err := hmu.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	handoff(t, acquired, released)
	redistest.Eventually(t, wait, "lock deleted after the waiter's unlock", func() bool { return node.Exists(ctx, name).Val() == 0 })
}

// A window is what a failover did to a lock taken just before it.
type window struct {
	old, promoted string
	// survived: the promoted master had the lock.
	survived bool
	// holderLost: the holder's context was cancelled with ErrLockLost.
	holderLost bool
}

// failoverWindow takes a lock through a failover client with opts (nil:
// defaults), kills the master with SIGKILL the moment
// Lock returns, waits for the sentinels to promote a replica, and reports
// whether the lock survived there. Replication is asynchronous, so
// without replica sync the lock may be lost; failoverWindow asserts only
// what holds either way: a replica is promoted; the lock there is either
// absent or exactly the holder's one hold with a lease no longer than
// the watchdog's; and the holder's view agrees, within one renewal round,
// with what the promoted master has: a surviving lock stays held and
// unlocks normally, a lost one cancels the holder's context with
// ErrLockLost and is free for others.
//
// TestSentinel's FailoverWithDefaults calls it with default options, so
// with replica sync, and asserts survived.
func failoverWindow(t *testing.T, s *redistest.Sentinel, opts *relock.Options) window {
	t.Helper()
	ctx := context.Background()
	var o relock.Options
	if opts != nil {
		o = *opts
	}
	if o.WatchdogTimeout == 0 {
		// Long enough for the failover (about DownAfter plus the
		// election) not to end the lease, short enough for a loss to be
		// found within a few seconds of the promotion.
		o.WatchdogTimeout = 15 * time.Second
	}
	rc := newClient(t, s.Client(t), &o)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	hctx, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	w := window{}
	if w.old, err = s.KillMaster(ctx); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if w.promoted, err = s.WaitPromotion(pctx, w.old); err != nil {
		t.Fatal(err)
	}
	t.Logf("master %s killed; %s promoted %v later", w.old, w.promoted, time.Since(killed))

	node := s.Node(w.promoted).Client(t)
	fields := node.HGetAll(ctx, name).Val()
	w.survived = len(fields) > 0
	if w.survived {
		ttl := node.PTTL(ctx, name).Val()
		if len(fields) != 1 || ttl <= 0 || ttl > o.WatchdogTimeout {
			t.Fatalf("lock on the promoted master: %v with TTL %v, want one hold with a lease within %v", fields, ttl, o.WatchdogTimeout)
		}
		for f, v := range fields {
			if !strings.HasPrefix(f, rc.ID()+":") || v != "1" {
				t.Fatalf("lock on the promoted master: %v, want the holder's one hold", fields)
			}
		}
	}

	// Within a renewal round (a third of the lease) and some slack, the
	// holder's view agrees with the promoted master.
	settle := o.WatchdogTimeout/3 + 5*time.Second
	if w.survived {
		// A renewal reaches the promoted master: the lease grows back.
		ttl := node.PTTL(ctx, name).Val()
		redistest.Eventually(t, settle, "holder's renewal on the promoted master", func() bool {
			return node.PTTL(ctx, name).Val() > ttl || hctx.Err() != nil
		})
		if hctx.Err() != nil {
			t.Fatalf("lock survived on %s, but the holder was told %v", w.promoted, context.Cause(hctx))
		}
		if err := mu.Unlock(hctx); err != nil {
			t.Fatalf("Unlock of the surviving lock: %v", err)
		}
		if node.Exists(ctx, name).Val() != 0 {
			t.Fatal("surviving lock not deleted by Unlock")
		}
		return w
	}
	select {
	case <-hctx.Done():
	case <-time.After(settle):
		t.Fatalf("lock lost on %s, but the holder was not told within %v", w.promoted, settle)
	}
	w.holderLost = errors.Is(context.Cause(hctx), relock.ErrLockLost)
	if !w.holderLost {
		t.Fatalf("holder's cause %v, want ErrLockLost", context.Cause(hctx))
	}
	if err := mu.Unlock(hctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock of the lost lock = %v, want ErrNotHeld", err)
	}
	other := reentrant.New(newClient(t, s.Client(t), nil), name, nil)
	octx, err := other.TryLock(ctx, 0)
	if err != nil {
		t.Fatalf("lost lock not free for others: %v", err)
	}
	if err := other.Unlock(octx); err != nil {
		t.Fatal(err)
	}
	return w
}

// lossWindow shows the window replica sync closes, with sync turned off:
// a lock granted by a master whose replicas do not have it yet (here:
// their links cut, and the replicas frozen so they cannot reconnect) is
// gone after a failover, and a second holder gets in while the first
// still believes it holds the lock, until its next renewal finds the lock
// gone. (With the links cut the master reports no replica, so the
// default sync would not wait either: Redisson's rule, which only a
// fixed SyncReplicas count closes.)
func lossWindow(t *testing.T, s *redistest.Sentinel) {
	ctx := context.Background()
	master, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const lease = 3 * time.Second
	holder := newClient(t, s.Client(t), &relock.Options{WatchdogTimeout: lease, SyncReplicas: relock.SyncOff})
	other := newClient(t, s.Client(t), nil)
	name := redistest.Key(t)

	var replicas []*redistest.Server
	for _, d := range s.Data {
		if d.Addr != master {
			replicas = append(replicas, d)
		}
	}
	for _, r := range replicas {
		if err := r.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = r.Resume() })
	}
	if err := s.Node(master).Client(t).Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
		t.Fatal(err)
	}
	mu := reentrant.New(holder, name, nil)
	hctx, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	told := make(chan time.Time, 1)
	context.AfterFunc(hctx, func() { told <- time.Now() })
	old, err := s.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range replicas {
		if err := r.Resume(); err != nil {
			t.Fatal(err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	promoted, err := s.WaitPromotion(pctx, old)
	if err != nil {
		t.Fatal(err)
	}
	if fields := s.Node(promoted).Client(t).HGetAll(ctx, name).Val(); len(fields) != 0 {
		t.Fatalf("the promoted master %s has the lock %v, which its replica link never carried", promoted, fields)
	}
	octx, err := reentrant.New(other, name, nil).TryLock(ctx, 5*time.Second)
	if err != nil {
		t.Fatalf("second holder on the promoted master: %v", err)
	}
	second := time.Now()
	var toldAt time.Time
	select {
	case toldAt = <-told:
	case <-time.After(2 * lease):
		t.Fatal("first holder never told of the loss")
	}
	if !errors.Is(context.Cause(hctx), relock.ErrLockLost) {
		t.Fatalf("first holder's cause %v, want ErrLockLost", context.Cause(hctx))
	}
	// Without replica sync nothing orders the two: the first holder is
	// told when a renewal fails or finds the lock gone, which may come
	// after the second holder got in (negative: it came before).
	t.Logf("with SyncOff: the lock was gone after the failover to %s and a second holder got it; the first holder was told %v after that",
		promoted, toldAt.Sub(second))
	if err := reentrant.New(other, name, nil).Unlock(octx); err != nil {
		t.Fatal(err)
	}
}

// sentinelPipelined: 16 goroutines share one failover client; their
// acquires, which wait for the master's two replicas (default options),
// go out in pipelines that end with one WAIT, and their unlocks in
// pipelines too.
func sentinelPipelined(t *testing.T, s *redistest.Sentinel) {
	rdb := s.Client(t)
	batches := &nodeBatches{}
	rdb.AddHook(batches)
	rc := newClient(t, rdb, nil)
	base := redistest.Key(t)
	redistest.Churn(t, 16, 15, func(w, i int) relock.Locker {
		return reentrant.New(rc, fmt.Sprintf("%s:%d:%d", base, w, i), nil)
	})
	batches.mu.Lock()
	defer batches.mu.Unlock()
	if batches.largest < 2 || batches.waits == 0 {
		t.Errorf("largest batch %d, %d ending with WAIT: want both", batches.largest, batches.waits)
	}
}
