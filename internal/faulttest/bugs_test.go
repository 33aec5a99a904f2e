package faulttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestLostReplyRunsScriptOnce: when the reply to a lock script is lost
// with its connection, the script must not run again. go-redis by default
// resends a command after io.EOF (up to 3 times), after the server may
// have run it, and the lock scripts count holds (HINCRBY), so a resent
// acquire would leave a hold nobody owns (the lock never released) and a
// resent unlock would release a hold still in use. relock runs its
// scripts through a client with retries off: the call fails instead, and
// the failure is handled (an acquire is undone, an unlock counted).
//
// The fault: the proxy drops replies (server to client) while the script
// runs, then closes the connection (as a reset or a timed-out TCP
// connection would); go-redis gets io.EOF.
func TestLostReplyRunsScriptOnce(t *testing.T) {
	requireReal(t)
	bg := context.Background()
	// dropReplies runs f while the proxy drops every reply, and ends the
	// drop (closing the proxy's connections) 300ms after the script ran.
	dropReplies := func(t *testing.T, x *proxy, ran func() bool, f func()) {
		t.Helper()
		must(t, x.add("drop_replies", "timeout", "downstream", map[string]any{"timeout": 0}))
		done := make(chan struct{})
		go func() { defer close(done); f() }()
		eventually(t, 5*time.Second, "script ran", ran)
		time.Sleep(300 * time.Millisecond)
		must(t, x.remove("drop_replies"))
		<-done
	}

	t.Run("acquire", func(t *testing.T) {
		raw := newRedis(t, srv.Addr)
		x := newProxy(t)
		name := redistest.Key(t)
		mu := reentrant.New(newClient(t, x.Addr, nil), name, nil)
		warmScripts(t, mu)

		var lctx context.Context
		var err error
		dropReplies(t, x, func() bool { return raw.Exists(bg, name).Val() == 1 }, func() { lctx, err = mu.Lock(bg) })
		t.Logf("Lock with its reply lost: %v; lock now %v", err, raw.HGetAll(bg, name).Val())
		if err == nil {
			if n := raw.HVals(bg, name).Val(); len(n) != 1 || n[0] != "1" {
				t.Fatalf("one Lock counted as %v holds", n)
			}
			if err := mu.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		}
		// Failed or unlocked: nobody may hold the lock now.
		if raw.Exists(bg, name).Val() != 0 {
			t.Errorf("lock held by nobody after the Lock (%v): %v (TTL %v)",
				err, raw.HGetAll(bg, name).Val(), raw.PTTL(bg, name).Val())
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
		if outer.Err() != nil || raw.Exists(bg, name).Val() == 0 {
			t.Errorf("one Unlock of two holds released the lock: lock %v, outer context ended with %v",
				raw.HGetAll(bg, name).Val(), context.Cause(outer))
		}
		if err := mu.Unlock(outer); err != nil {
			t.Errorf("outer Unlock: %v", err)
		}
		if raw.Exists(bg, name).Val() != 0 {
			t.Errorf("lock left after both Unlocks: %v", raw.HGetAll(bg, name).Val())
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
