package fair_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestCrashedHolderAndHead: the holder and the first waiter crashed (their
// process is gone, so nobody listens on their client's channel), and a
// live waiter queued behind them takes the lock when the holder's lease
// runs out. It must then hold the lock and be out of the queue: before,
// the attempt that handed the lock over to it went on to queue it again
// at the tail, so that its own Unlock handed the lock back to itself,
// nobody took that grant, and the waiter behind it waited a whole lease.
func TestCrashedHolderAndHead(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	// Owner fields of relock clients (version-8 ids) whose processes are
	// gone: nothing listens on their channels.
	const deadHolder = "00000000-0000-8000-8000-00000000dead:1"
	const deadHead = "00000000-0000-8000-8000-00000000dead:2"
	if err := raw.HSet(bg, name, deadHolder, 1).Err(); err != nil {
		t.Fatal(err)
	}
	raw.PExpire(bg, name, 300*time.Millisecond)
	raw.RPush(bg, queue, deadHead)
	raw.ZAdd(bg, timeouts, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: deadHead})

	rc := newClient(t, nil)
	second := fair.New(rc, name, nil)
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	lctx, err := second.Lock(ctx)
	if err != nil {
		t.Fatalf("Lock behind a crashed holder and head: %v", err)
	}
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 0 {
		t.Errorf("queue %v once the live waiter holds the lock, want it empty", q)
	}
	if got := raw.ZRange(bg, timeouts, 0, -1).Val(); len(got) != 0 {
		t.Errorf("timeouts left while the queue is empty: %v", got)
	}

	third := fair.New(newClient(t, nil), name, nil)
	got := make(chan error, 1)
	go func() {
		tctx, err := third.Lock(ctx)
		if err == nil {
			err = third.Unlock(tctx)
		}
		got <- err
	}()
	waitQueued(t, raw, queue, 1)
	start := time.Now()
	if err := second.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("the next waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("the next waiter did not get the lock within 5s of the Unlock (queue %v, lock %v)",
			raw.LRange(bg, queue, 0, -1).Val(), raw.HGetAll(bg, name).Val())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the next waiter took the lock %v after the Unlock, want well under a lease", d)
	}
	if n := raw.Exists(bg, name, queue, timeouts).Val(); n != 0 {
		t.Errorf("%d of the lock's keys left", n)
	}
}

// waitQueued waits, up to 5 s, until queue holds n waiters.
func waitQueued(t *testing.T, raw *redis.Client, queue string, n int64) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); raw.LLen(context.Background(), queue).Val() != n; {
		if time.Now().After(end) {
			t.Fatalf("queue %v, want %d waiters", raw.LRange(context.Background(), queue, 0, -1).Val(), n)
		}
		time.Sleep(time.Millisecond)
	}
}
