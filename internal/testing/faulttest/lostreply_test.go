package faulttest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestLostReplyRetried: when the reply to a lock script is lost with its
// connection, go-redis sends the script again (it retries on io.EOF), and
// the script runs twice. The lock scripts count holds, so Redis then
// counts one hold too many (a retried acquire) or one too few (a retried
// unlock). relock notices the miscount at the owner's Unlock and treats
// it as a lost lock: the lock context is cancelled with ErrLockLost and
// renewal stops, so a phantom hold ends with its lease instead of keeping
// the lock for ever, and an owner whose holds were released early is told.
//
// The fault: the proxy drops replies (server to client) while the script
// runs, then closes the connection (as a reset or a timed-out TCP
// connection would); go-redis gets io.EOF and retries on a new one.
func TestLostReplyRetried(t *testing.T) {
	requireReal(t)
	bg := context.Background()
	// dropReplies runs f while the proxy drops every reply, and ends the
	// drop (closing the proxy's connections) 300ms after the script ran.
	dropReplies := func(t *testing.T, x *proxy, ran func() bool, f func()) {
		t.Helper()
		must(t, x.add("drop_replies", "timeout", "downstream", map[string]any{"timeout": 0}))
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		redistest.Eventually(t, 5*time.Second, "script ran", ran)
		time.Sleep(300 * time.Millisecond)
		must(t, x.remove("drop_replies"))
		<-done
	}

	t.Run("acquire", func(t *testing.T) {
		raw := newRedis(t, srv.Addr)
		x := newProxy(t)
		name := redistest.Key(t)
		const lease = time.Second
		mu := reentrant.New(newClient(t, x.Addr, &relock.Options{WatchdogTimeout: lease}), name, nil)
		warmScripts(t, mu)

		var lctx context.Context
		var err error
		dropReplies(t, x, func() bool { return raw.Exists(bg, name).Val() == 1 }, func() { lctx, err = mu.Lock(bg) })
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after one Lock with its reply lost: %v", raw.HGetAll(bg, name).Val())
		if err := mu.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
		if raw.Exists(bg, name).Val() == 1 {
			// The acquire ran twice: the owner must be told, and the
			// phantom hold must end with its lease.
			if !errors.Is(context.Cause(lctx), relock.ErrLockLost) {
				t.Fatalf("miscounted hold: context cause %v, want ErrLockLost", context.Cause(lctx))
			}
			redistest.Eventually(t, 3*lease, "phantom hold expired", func() bool { return raw.Exists(bg, name).Val() == 0 })
		}
		_, _ = mu.ForceUnlock(bg)
	})

	t.Run("unlock", func(t *testing.T) {
		raw := newRedis(t, srv.Addr)
		x := newProxy(t)
		name := redistest.Key(t)
		mu := reentrant.New(newClient(t, x.Addr, nil), name, nil)
		warmScripts(t, mu)
		outer, err := mu.Lock(bg)
		if err != nil {
			t.Fatal(err)
		}
		inner, err := mu.Lock(outer)
		if err != nil {
			t.Fatal(err)
		}

		dropReplies(t, x, func() bool { return raw.HVals(bg, name).Val()[0] == "1" }, func() { err = mu.Unlock(inner) })
		t.Logf("inner Unlock with its reply lost: %v; lock now %v; outer context: %v", err, raw.HGetAll(bg, name).Val(), context.Cause(outer))
		if raw.Exists(bg, name).Val() == 0 {
			// The unlock ran twice and released the outer hold too: the
			// owner must be told its lock is lost.
			if !errors.Is(context.Cause(outer), relock.ErrLockLost) {
				t.Fatalf("outer hold released early: context cause %v, want ErrLockLost", context.Cause(outer))
			}
		} else if err := mu.Unlock(outer); err != nil {
			t.Errorf("outer Unlock: %v", err)
		}
		_, _ = mu.ForceUnlock(bg)
	})
}

// warmScripts loads the lock's scripts on the server (a Lock and an
// Unlock), so that later calls are single EVALSHAs.
func warmScripts(t *testing.T, mu *reentrant.Mutex) {
	t.Helper()
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := mu.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
