package relock_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu      sync.Mutex // guards records
	records []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}

// leaks returns the attributes of the leak warnings about lock name.
func (h *logRecorder) leaks(name string) []map[string]slog.Value {
	h.mu.Lock()
	defer h.mu.Unlock()
	var found []map[string]slog.Value
	for _, r := range h.records {
		attrs := map[string]slog.Value{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value
			return true
		})
		if r.Level == slog.LevelWarn && strings.Contains(r.Message, "without Unlock") && attrs["lock"].String() == name {
			found = append(found, attrs)
		}
	}
	return found
}

// leakEnv is a client with a short watchdog whose log and Observer the
// test reads.
type leakEnv struct {
	srv *redistest.Server
	rc  *relock.Client
	log *logRecorder
	obs *recorder
}

func newLeakEnv(t *testing.T, stacks bool) *leakEnv {
	t.Helper()
	srv := redistest.Start(t)
	srv.RequireReal(t)
	e := &leakEnv{srv: srv, log: &logRecorder{}, obs: &recorder{}}
	e.rc = redistest.Relock(t, srv.LockClient(t), &relock.Options{
		WatchdogTimeout: 300 * time.Millisecond,
		Logger:          slog.New(e.log),
		Observer:        e.obs,
		LeakStacks:      stacks,
	})
	return e
}

// collect runs the garbage collector until report holds, failing t
// after limit.
func collect(t *testing.T, limit time.Duration, what string, report func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		runtime.GC()
		if report() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// collectFor runs the garbage collector for d, failing t as soon as
// report holds: what must not happen.
func collectFor(t *testing.T, d time.Duration, what string, report func() bool) {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		if report() {
			t.Fatalf("%s", what)
		}
	}
}

// lockAndDrop takes mu for a fresh owner and drops the lock context: the
// forgotten Unlock.
//
//go:noinline
func lockAndDrop(t *testing.T, mu relock.Locker) {
	t.Helper()
	if _, err := mu.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// leakedEnds returns the Observer's hold ends on name with a cause
// matching ErrLeaked.
func (e *leakEnv) leakedEnds(name string) int {
	n := 0
	for _, h := range e.obs.snapshot().holds {
		if h.Name == name && errors.Is(h.Cause, relock.ErrLeaked) {
			n++
		}
	}
	return n
}

// TestForgottenUnlock: a lock context dropped without Unlock is reported
// once a garbage collection finds it unreachable: a warning naming the
// lock, its owner and the stack of the Lock call (LeakStacks), and the
// Observer's HoldEnded with a cause matching ErrLeaked and ErrLockLost.
// Its renewal stops: the lock frees itself, and another owner takes it
// within a few leases.
func TestForgottenUnlock(t *testing.T) {
	redistest.Parallel(t)
	kinds := map[string]func(rc *relock.Client, name string) relock.Locker{
		"reentrant":    func(rc *relock.Client, n string) relock.Locker { return reentrant.New(rc, n, nil) },
		"fair":         func(rc *relock.Client, n string) relock.Locker { return fair.New(rc, n, nil) },
		"rwlock/write": func(rc *relock.Client, n string) relock.Locker { return rwlock.New(rc, n, nil).Writer() },
		"rwlock/read":  func(rc *relock.Client, n string) relock.Locker { return rwlock.New(rc, n, nil).Reader() },
		// A fixed lease ends by itself; the report still tells of the
		// bug, and ends the hold here at once.
		"reentrant/fixed": func(rc *relock.Client, n string) relock.Locker {
			return reentrant.New(rc, n, &reentrant.Options{Lease: time.Second})
		},
	}
	for kind, newLock := range kinds {
		t.Run(kind, func(t *testing.T) {
			e := newLeakEnv(t, true)
			bg := context.Background()
			name := redistest.Key(t)
			mu := newLock(e.rc, name)
			lockAndDrop(t, mu)
			collect(t, 5*time.Second, "leak reported", func() bool { return len(e.log.leaks(name)) > 0 && e.leakedEnds(name) > 0 })
			if n := len(e.log.leaks(name)); n != 1 {
				t.Fatalf("%d leak warnings, want 1", n)
			}
			attrs := e.log.leaks(name)[0]
			if owner := attrs["owner"].String(); !strings.HasPrefix(owner, e.rc.ID()+":") {
				t.Errorf("owner %q, want the owner's field", owner)
			}
			if stack := attrs["stack"].String(); !strings.Contains(stack, "relock_test.lockAndDrop") || strings.Contains(stack, "/internal/") {
				t.Errorf("stack does not start at the Lock call:\n%s", stack)
			}
			t.Logf("reported: %v", attrs)
			if n := e.rc.Stats().Holds; n != 0 {
				t.Fatalf("Stats().Holds = %d after the report, want 0", n)
			}
			// Renewed, the lock would stay held for good; its renewal
			// stopped, it frees itself within a lease (300 ms) of the
			// report, and a renewal round already sent may add one more.
			other := newLock(e.rc, name)
			ctx, cancel := context.WithTimeout(bg, 2*time.Second)
			defer cancel()
			lctx, err := other.Lock(ctx)
			if err != nil {
				t.Fatalf("the leaked lock did not free itself: %v", err)
			}
			if err := other.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestForgottenUnlockNoStack: without LeakStacks the report has no
// stack.
func TestForgottenUnlockNoStack(t *testing.T) {
	e := newLeakEnv(t, false)
	name := redistest.Key(t)
	lockAndDrop(t, reentrant.New(e.rc, name, nil))
	collect(t, 5*time.Second, "leak reported", func() bool { return len(e.log.leaks(name)) > 0 })
	if s, ok := e.log.leaks(name)[0]["stack"]; ok {
		t.Fatalf("stack %q without LeakStacks", s)
	}
}

// TestNotLeaked: what can still unlock a hold keeps it from being
// reported: the lock context itself, a child of it not yet cancelled,
// a re-entry's context, or an owner the caller's context carried
// (WithNewOwner) that the caller keeps.
func TestNotLeaked(t *testing.T) {
	redistest.Parallel(t)
	e := newLeakEnv(t, false)
	bg := context.Background()
	quiet := func(t *testing.T, name string) {
		t.Helper()
		collectFor(t, redistest.Short(700*time.Millisecond, 400*time.Millisecond), "reported", func() bool { return len(e.log.leaks(name)) > 0 || e.leakedEnds(name) > 0 })
		if ttl, err := reentrant.New(e.rc, name, nil).TTL(bg); err != nil || ttl < 150*time.Millisecond {
			t.Fatalf("TTL %v (%v): not renewed", ttl, err)
		}
	}
	t.Run("kept", func(t *testing.T) {
		name := redistest.Key(t)
		mu := reentrant.New(e.rc, name, nil)
		lctx := redistest.Lock(t, mu, bg)
		quiet(t, name)
		runtime.KeepAlive(lctx)
		redistest.Unlock(t, mu, lctx)
	})
	t.Run("child", func(t *testing.T) {
		name := redistest.Key(t)
		mu := reentrant.New(e.rc, name, nil)
		child, cancel := childOf(t, mu)
		quiet(t, name)
		redistest.Unlock(t, mu, child)
		cancel()
	})
	t.Run("dropped child", func(t *testing.T) {
		// The documented limit: a child not cancelled keeps its parent
		// reachable even when the child itself was dropped. Cancelling
		// it lets the collector find the leak.
		name := redistest.Key(t)
		cancel := dropChild(t, reentrant.New(e.rc, name, nil))
		quiet(t, name)
		cancel()
		collect(t, 5*time.Second, "leak reported once the child is cancelled", func() bool { return len(e.log.leaks(name)) > 0 })
	})
	t.Run("re-entry kept", func(t *testing.T) {
		name := redistest.Key(t)
		mu := reentrant.New(e.rc, name, nil)
		outer := reenterAndDrop(t, mu)
		quiet(t, name)
		redistest.Unlock(t, mu, outer)
		if err := mu.Unlock(outer); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("WithNewOwner", func(t *testing.T) {
		name := redistest.Key(t)
		mu := reentrant.New(e.rc, name, nil)
		owner := relock.WithNewOwner(bg)
		lockAndDrop(t, &ownerLocker{mu, owner})
		quiet(t, name)
		redistest.Unlock(t, mu, owner)
	})
	if n := len(e.obs.snapshot().holds); n == 0 {
		t.Fatal("no hold ended")
	}
}

// childOf takes mu and returns a child of the lock context, dropping the
// lock context itself.
//
//go:noinline
func childOf(t *testing.T, mu relock.Locker) (context.Context, context.CancelFunc) {
	t.Helper()
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return context.WithCancel(lctx)
}

// dropChild takes mu and derives a child of the lock context, dropping
// both; it returns the child's cancel func.
//
//go:noinline
func dropChild(t *testing.T, mu relock.Locker) context.CancelFunc {
	t.Helper()
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, cancel := context.WithCancel(lctx)
	return cancel
}

// reenterAndDrop takes mu, re-enters it, and returns the outer context,
// dropping the inner one.
//
//go:noinline
func reenterAndDrop(t *testing.T, mu relock.Locker) context.Context {
	t.Helper()
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mu.Lock(lctx); err != nil {
		t.Fatal(err)
	}
	return lctx
}

// ownerLocker locks with its owner's context whatever it is given.
type ownerLocker struct {
	relock.Locker
	owner context.Context
}

func (l *ownerLocker) Lock(context.Context) (context.Context, error) { return l.Locker.Lock(l.owner) }

// TestLeakedReentry: a re-entered hold whose contexts are all dropped is
// reported once, with the holds it still counts.
func TestLeakedReentry(t *testing.T) {
	e := newLeakEnv(t, false)
	name := redistest.Key(t)
	mu := reentrant.New(e.rc, name, nil)
	lctx := reenterAndDrop(t, mu)
	if err := mu.Unlock(lctx); err != nil { // one of the two holds
		t.Fatal(err)
	}
	collect(t, 5*time.Second, "leak reported", func() bool { return len(e.log.leaks(name)) > 0 })
	if got := e.log.leaks(name)[0]["holds"].Int64(); got != 1 {
		t.Fatalf("holds = %d, want 1", got)
	}
	if n := e.leakedEnds(name); n != 1 {
		t.Fatalf("%d leaked hold ends, want 1", n)
	}
}

// TestCloseReleasesLeaked: Close releases the holds a leak ended too, as
// it does those still held: their records would otherwise stay in Redis
// until their leases ran out (10 s here), long after the process shut
// down. Watchdog-renewed and fixed-lease holds alike.
func TestCloseReleasesLeaked(t *testing.T) {
	for _, lease := range []time.Duration{0, 10 * time.Second} {
		t.Run(fmt.Sprintf("lease=%v", lease), func(t *testing.T) {
			srv := redistest.Start(t)
			srv.RequireReal(t)
			log := &logRecorder{}
			rc := redistest.Relock(t, srv.LockClient(t), &relock.Options{WatchdogTimeout: 10 * time.Second, Logger: slog.New(log)})
			name := redistest.Key(t)
			lockAndDrop(t, reentrant.New(rc, name, &reentrant.Options{Lease: lease}))
			collect(t, 5*time.Second, "leak reported", func() bool { return len(log.leaks(name)) > 0 })
			raw := srv.Client(t)
			if n := raw.Exists(context.Background(), name).Val(); n != 1 {
				t.Fatalf("the leaked lock's record is gone before Close (EXISTS %d)", n)
			}
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if n := raw.Exists(context.Background(), name).Val(); n != 0 {
				t.Fatalf("the leaked lock's record outlived Close (PTTL %v)", raw.PTTL(context.Background(), name).Val())
			}
		})
	}
}

// TestUnlockedNotLeaked: a lock context given to Unlock may become
// unreachable while the Unlock is under way (after its last use in the
// call, before its outcome ends the hold); a collection then must not
// report the hold as forgotten. Goroutines lock and unlock while the
// collector runs without pause, the pipeline sharing replies between
// them.
func TestUnlockedNotLeaked(t *testing.T) {
	e := newLeakEnv(t, false)
	name := redistest.Key(t)
	stop := make(chan struct{})
	var gc sync.WaitGroup
	gc.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	})
	redistest.Churn(t, 16, redistest.Short(400, 150), func(w, _ int) relock.Locker {
		return reentrant.New(e.rc, fmt.Sprintf("%s:%d", name, w), nil)
	})
	close(stop)
	gc.Wait()
	for w := range 16 {
		n := fmt.Sprintf("%s:%d", name, w)
		if leaks := e.log.leaks(n); len(leaks) > 0 || e.leakedEnds(n) > 0 {
			t.Fatalf("%s reported as forgotten although unlocked: %v", n, leaks)
		}
	}
}
