package securetest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// TestSuites runs every lock kind's behaviour suite (locktest.All, and
// the queue order of the FIFO kinds) as an ACL user allowed only
// redistest.LockCommands, over TLS with a client certificate; each suite
// checks that the server logged no denied command.
func TestSuites(t *testing.T) {
	s := redistest.StartSecure(t)
	for _, k := range locktest.All {
		t.Run(k.Name, func(t *testing.T) { locktest.Run(t, s, k) })
		if k.FIFO {
			t.Run(k.Name+"Order", func(t *testing.T) { locktest.RunFairKind(t, s, k) })
		}
	}
	t.Run("RWReaders", func(t *testing.T) { locktest.RunReaders(t, s) })
}

// TestLimitedUserOverTLS runs what the suites do not, fencing tokens,
// MultiLock, RedLock and replica sync, as the limited user over TLS; the
// server's cleanup checks that it denied nothing.
func TestLimitedUserOverTLS(t *testing.T) {
	s := redistest.StartSecure(t)
	admin := s.Client(t)
	bg := context.Background()
	if err := admin.Do(bg, "ACL", "LOG", "RESET").Err(); err != nil {
		t.Fatal(err)
	}
	// Pipelines of renewals and waits woken through pub/sub.
	opts := &relock.Options{WatchdogTimeout: 300 * time.Millisecond}
	newClient := func() *relock.Client {
		rc, err := relock.New(s.LockClient(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		return rc
	}
	a, b := newClient(), newClient()

	t.Run("reentrant", func(t *testing.T) {
		mu := reentrant.New(a, "secure:reentrant", &reentrant.Options{Fencing: true})
		other := reentrant.New(b, "secure:reentrant", nil)
		ctx := must(t)(mu.Lock(bg))
		inner := must(t)(mu.Lock(ctx))
		if _, err := mu.Token(inner); err != nil {
			t.Fatal(err)
		}
		if n, err := mu.HoldCount(inner); err != nil || n != 2 {
			t.Fatalf("HoldCount = %d, %v", n, err)
		}
		for _, q := range []func(context.Context) (bool, error){mu.IsLocked, mu.IsHeld} {
			if ok, err := q(ctx); err != nil || !ok {
				t.Fatalf("state query = %v, %v", ok, err)
			}
		}
		if _, err := mu.TTL(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := other.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("TryLock = %v", err)
		}
		time.Sleep(time.Second) // watchdog rounds renew the 300ms lease
		woken := wakeAfter(t, other, func() {
			if err := mu.Unlock(inner); err != nil {
				t.Fatal(err)
			}
			if err := mu.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if woken > 2*time.Second {
			t.Fatalf("waiter woken %v after the release", woken)
		}
		must(t)(mu.Lock(bg))
		if ok, err := other.ForceUnlock(bg); err != nil || !ok {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
	})

	t.Run("fair", func(t *testing.T) {
		mu := fair.New(a, "secure:fair", nil)
		ctx := must(t)(mu.Lock(bg))
		if _, err := fair.New(b, "secure:fair", nil).TryLock(bg, 100*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("TryLock = %v", err)
		}
		woken := wakeAfter(t, fair.New(b, "secure:fair", nil), func() {
			if err := mu.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
		if woken > 2*time.Second {
			t.Fatalf("waiter woken %v after the release", woken)
		}
		must(t)(mu.Lock(bg))
		if ok, err := mu.ForceUnlock(bg); err != nil || !ok {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
	})

	t.Run("rwlock", func(t *testing.T) {
		rw := rwlock.New(a, "secure:rw", nil)
		owner := relock.WithNewOwner(bg)
		w := must(t)(rw.Lock(owner))
		r := must(t)(rw.RLock(owner))
		if err := rw.Unlock(w); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // read holds renewed
		if _, err := rw.Lock(r); !errors.Is(err, relock.ErrUpgrade) {
			t.Fatalf("upgrade = %v", err)
		}
		woken := wakeAfter(t, rwlock.New(b, "secure:rw", nil).Writer(), func() {
			if err := rw.RUnlock(r); err != nil {
				t.Fatal(err)
			}
		})
		if woken > 2*time.Second {
			t.Fatalf("writer woken %v after the release", woken)
		}
		must(t)(rw.RLock(bg))
		if ok, err := rw.Reader().ForceUnlock(bg); err != nil || !ok {
			t.Fatalf("ForceUnlock = %v, %v", ok, err)
		}
	})

	t.Run("multilock and redlock", func(t *testing.T) {
		ml := multilock.New(
			reentrant.New(a, "secure:m1", nil),
			fair.New(a, "secure:m2", nil),
			rwlock.New(a, "secure:m3", nil).Reader(),
		)
		if err := ml.Unlock(must(t)(ml.Lock(bg))); err != nil {
			t.Fatal(err)
		}
		rl := redlock.New([]*relock.Client{b}, "secure:red", nil)
		if err := rl.Unlock(must(t)(rl.Lock(bg))); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("replica sync", func(t *testing.T) {
		rc, err := relock.New(s.LockClient(t), &relock.Options{SyncReplicas: 1, SyncTimeout: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		// No replica exists: WAIT runs (it is allowed) and counts 0.
		_, err = reentrant.New(rc, "secure:sync", nil).Lock(bg)
		if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "0 of 1 replicas") {
			t.Fatalf("Lock with no replica = %v", err)
		}
	})

	t.Run("pipelined", func(t *testing.T) {
		// One client shared by 32 goroutines: their calls go out in
		// pipelines over the TLS connection, as the limited user.
		rdb := s.LockClient(t)
		batches := &pipelines{}
		rdb.AddHook(batches)
		rc, err := relock.New(rdb, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		redistest.Churn(t, 32, 20, func(w, i int) relock.Locker {
			return fair.New(rc, fmt.Sprintf("secure:pipelined:%d:%d", w, i%3), nil)
		})
		if batches.n.Load() == 0 {
			t.Error("no calls pipelined over TLS")
		}
	})
}

// pipelines counts the pipelines of more than one command a go-redis
// client sends.
type pipelines struct{ n atomic.Int64 }

func (h *pipelines) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipelines) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *pipelines) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 1 {
			h.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// wakeAfter starts a Lock of mu by a new owner, runs release once it
// waits, and returns how long after release it took the lock.
func wakeAfter(t *testing.T, mu relock.Locker, release func()) time.Duration {
	t.Helper()
	got := make(chan time.Time, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		ctx, err := mu.Lock(context.Background())
		got <- time.Now()
		if err != nil {
			t.Error(err)
			return
		}
		if err := mu.Unlock(ctx); err != nil {
			t.Error(err)
		}
	})
	time.Sleep(200 * time.Millisecond) // the waiter queues and subscribes
	released := time.Now()
	release()
	select {
	case at := <-got:
		wg.Wait()
		return at.Sub(released)
	case <-time.After(10 * time.Second):
		t.Fatal("waiter never took the lock")
		return 0
	}
}

// must returns a function that passes on a lock context, failing the
// test on an error.
func must(t *testing.T) func(context.Context, error) context.Context {
	return func(ctx context.Context, err error) context.Context {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
}
