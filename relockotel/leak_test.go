package relockotel_test

import (
	"context"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// lockAndDrop takes mu for a fresh owner and drops the lock context
// without Unlock.
//
//go:noinline
func lockAndDrop(t *testing.T, mu *reentrant.Mutex) {
	t.Helper()
	if _, err := mu.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestLeaked: a lock context dropped without Unlock, once collected,
// ends its hold "leaked" and counts one relock.hold.leaked, and no lost
// lease.
func TestLeaked(t *testing.T) {
	e := newEnv(t, false)
	rc := e.client(t, &relock.Options{Observer: e.obs, WatchdogTimeout: 600 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	lockAndDrop(t, reentrant.New(rc, t.Name(), nil))
	eventually(t, "relock.hold.leaked", func() bool {
		runtime.GC()
		_, ok := value(t, e.collect(t), "relock.hold.leaked", kindReentrant)
		return ok
	})
	ms := e.collect(t)
	if n, _ := value(t, ms, "relock.hold.leaked", kindReentrant); n != 1 {
		t.Errorf("relock.hold.leaked = %d, want 1", n)
	}
	if p, ok := histogram(t, ms, "relock.hold.duration", kindReentrant, causeKey.String("leaked")); !ok || p.Count != 1 {
		t.Errorf("hold.duration, leaked: count %d (found %v), want count 1", p.Count, ok)
	}
	if n, _ := value(t, ms, "relock.lease.lost", kindReentrant); n != 0 {
		t.Errorf("relock.lease.lost = %d, want 0", n)
	}
}
