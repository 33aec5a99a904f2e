package fair_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// serverMillis is the Redis server's clock in epoch ms.
func serverMillis(t *testing.T, raw *redis.Client) int64 {
	t.Helper()
	now, err := raw.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// scores returns the timeout set of lock name as field -> score.
func scores(t *testing.T, raw *redis.Client, name string) map[string]int64 {
	t.Helper()
	_, timeouts := queueKeys(name)
	zs, err := raw.ZRangeWithScores(context.Background(), timeouts, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]int64, len(zs))
	for _, z := range zs {
		m[z.Member.(string)] = int64(z.Score)
	}
	return m
}

func near(got, want, tolerance int64) bool { return got >= want-tolerance && got <= want+tolerance }

// queued starts a Lock on its own client that holds the lock until
// release is closed, waits until it is queued at position pos, and
// returns its field and a channel reporting its acquire.
func queued(t *testing.T, raw *redis.Client, name string, pos int, opts *fair.Options, ctx context.Context, release <-chan struct{}) (string, <-chan error) {
	t.Helper()
	rc := newClient(t, nil)
	m := fair.New(rc, name, opts)
	done := make(chan error, 1)
	go func() {
		lctx, err := m.Lock(ctx)
		done <- err
		if err == nil {
			<-release
			_ = m.Unlock(lctx)
		}
	}()
	return locktest.WaitQueued(t, raw, name, rc.ID(), pos), done
}

// TestLayout pins Redisson's RFairLock layout: the queue lists waiters'
// fields in order, and each one's score is the previous one's plus the
// wait timeout, the first's being now + the lock's TTL + wait timeout;
// a grant leaves the others' deadlines alone; both keys disappear when
// the queue empties.
func TestLayout(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	const wait = 10 * time.Second
	const waitMs = int64(wait / time.Millisecond)
	opts := &fair.Options{WaitTimeout: wait}
	holder := fair.New(newClient(t, nil), name, opts)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if fields := raw.HGetAll(bg, name).Val(); len(fields) != 1 {
		t.Fatalf("lock hash %v, want one field", fields)
	}

	release := make(chan struct{})
	var fields []string
	var dones []<-chan error
	for i := range 3 {
		f, d := queued(t, raw, name, i+1, opts, bg, release)
		fields, dones = append(fields, f), append(dones, d)
	}
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 3 || q[0] != fields[0] || q[1] != fields[1] || q[2] != fields[2] {
		t.Fatalf("queue %v, want %v", q, fields)
	}
	now := serverMillis(t, raw)
	sc := scores(t, raw, name)
	ttl := int64(raw.PTTL(bg, name).Val() / time.Millisecond)
	if !near(sc[fields[0]], now+ttl+waitMs, 500) {
		t.Fatalf("first waiter's score %d, want about now %d + TTL %d + wait %d", sc[fields[0]], now, ttl, waitMs)
	}
	for i := 1; i < 3; i++ {
		if !near(sc[fields[i]], sc[fields[i-1]]+waitMs, 50) {
			t.Fatalf("waiter %d's score %d, want the previous %d + wait %d", i, sc[fields[i]], sc[fields[i-1]], waitMs)
		}
	}

	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	if err := <-dones[0]; err != nil {
		t.Fatal(err)
	}
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 2 || q[0] != fields[1] {
		t.Fatalf("queue after the head acquired: %v", q)
	}
	after := scores(t, raw, name)
	if _, ok := after[fields[0]]; ok || len(after) != 2 {
		t.Fatalf("scores after the head acquired: %v", after)
	}
	// A grant leaves the other deadlines as they are (Redisson's own
	// acquire moves them all up by a wait): its cost does not grow with
	// the queue.
	for _, f := range fields[1:] {
		if after[f] != sc[f] {
			t.Fatalf("score of %s after the head acquired: %d, want it unchanged at %d", f, after[f], sc[f])
		}
	}
	if v := raw.HGet(bg, name, fields[0]).Val(); v != "1" {
		t.Fatalf("new holder's field = %q, want 1", v)
	}
	close(release)
	for _, d := range dones[1:] {
		if err := <-d; err != nil {
			t.Fatal(err)
		}
	}
	redistest.Eventually(t, 2*time.Second, "lock keys gone", func() bool { return raw.Exists(bg, name, queue, timeouts).Val() == 0 })
}

// TestGiveUp: a TryLock that times out and a Lock whose context is
// cancelled leave the queue and timeout set; the waiters behind them
// move up one wait, keep their order, and acquire.
func TestGiveUp(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	const waitMs = int64(fair.DefaultWaitTimeout / time.Millisecond)
	holder := fair.New(newClient(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}

	release := make(chan struct{})
	first, firstDone := queued(t, raw, name, 1, nil, bg, release)

	// A TryLock that gives up from the middle of the queue.
	tryRC := newClient(t, nil)
	tryErr := make(chan error, 1)
	go func() {
		_, err := fair.New(tryRC, name, nil).TryLock(bg, 400*time.Millisecond)
		tryErr <- err
	}()
	tryField := locktest.WaitQueued(t, raw, name, tryRC.ID(), 2)
	// A Lock that is cancelled from the middle of the queue.
	cctx, cancel := context.WithCancel(bg)
	cancelled, cancelledDone := queued(t, raw, name, 3, nil, cctx, release)
	last, lastDone := queued(t, raw, name, 4, nil, bg, release)
	before := scores(t, raw, name)

	if err := <-tryErr; !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock = %v, want ErrNotAcquired", err)
	}
	cancel()
	if err := <-cancelledDone; !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Lock = %v", err)
	}
	// A give-up Redis does not answer within relock.CleanupGrace (a
	// loaded machine) goes on in the background after the call returns.
	redistest.Eventually(t, 2*time.Second, "the two that gave up out of the queue", func() bool {
		q := raw.LRange(bg, queue, 0, -1).Val()
		return len(q) == 2 && q[0] == first && q[1] == last
	})
	after := scores(t, raw, name)
	if _, ok := after[tryField]; ok {
		t.Fatal("the TryLock that gave up is still in the timeout set")
	}
	if _, ok := after[cancelled]; ok {
		t.Fatal("the cancelled Lock is still in the timeout set")
	}
	if after[first] != before[first] {
		t.Fatalf("head's score moved from %d to %d though nobody ahead left", before[first], after[first])
	}
	if after[last] != before[last]-2*waitMs {
		t.Fatalf("last waiter's score %d, want %d less two waits", after[last], before[last])
	}

	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-lastDone:
		t.Fatalf("last waiter acquired (%v) while the head held the lock", err)
	default:
	}
	close(release)
	if err := <-lastDone; err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*time.Second, "lock keys gone", func() bool { return raw.Exists(bg, name, queue, timeouts).Val() == 0 })
}

// TestTryLockZeroNeverQueues: TryLock(0) on a held lock leaves no queue
// entry; on a free lock with a queue it does not jump the queue.
func TestTryLockZeroNeverQueues(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	holder := fair.New(newClient(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	m := fair.New(newClient(t, nil), name, nil)
	if _, err := m.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(0) of a held lock = %v", err)
	}
	if n := raw.Exists(bg, queue, timeouts).Val(); n != 0 {
		t.Fatal("TryLock(0) joined the queue")
	}
	release := make(chan struct{})
	defer close(release)
	_, done := queued(t, raw, name, 1, nil, bg, release)
	// Free the lock behind the head's back: the key is gone but the head
	// has not taken it yet.
	raw.Del(bg, name)
	if _, err := m.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(0) ahead of a queued waiter = %v, want ErrNotAcquired", err)
	}
	if err := holder.Unlock(hctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("holder's Unlock of the deleted lock = %v", err)
	}
	// That Unlock found the lock free and woke the head.
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if q := raw.LLen(bg, queue).Val(); q != 0 {
		t.Fatalf("queue length %d after the head acquired", q)
	}
}
