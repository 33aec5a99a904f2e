package fair_test

import (
	"context"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// The hot paths of the fair lock on the package's redis-server. Run with:
// go test -run '^$' -bench . ./fair

// BenchmarkLockUnlock is the uncontended path: one acquire script call
// (queue empty), the local hold record, one unlock script call.
func BenchmarkLockUnlock(b *testing.B) {
	mu := fair.New(newClient(b, nil), redistest.Key(b), nil)
	ctx := relock.WithNewOwner(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		lctx, err := mu.Lock(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := mu.Unlock(lctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScripts is the floor under BenchmarkLockUnlock: the same two
// scripts (acquire on a free lock, unlock) called straight through
// go-redis, without the hold record, the watchdog or the contexts.
func BenchmarkScripts(b *testing.B) {
	rdb := srv.Client(b)
	name := redistest.Key(b)
	queue, timeouts := queueKeys(name)
	keys := []string{name, queue, timeouts, "redisson_lock__channel:{" + name + "}"}
	field := "5b7e3f7e-8d4a-8c1e-9d0b-2f6f0d1c3a44:1"
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if n, err := lua.FairAcquire().Run(ctx, rdb, keys, 30000, field, 300000, "1", "PUBLISH").Int64(); n != 1 || err != nil {
			b.Fatalf("acquire: %d, %v", n, err)
		}
		if err := lua.FairUnlock().Run(ctx, rdb, keys, 30000, field, "PUBLISH", "1").Err(); err != nil {
			b.Fatalf("unlock: %v", err)
		}
	}
}

// BenchmarkHandoff is the wait loop: two clients take turns, and since a
// releaser that locks again joins the tail of the queue, nearly every
// acquisition is a queued waiter woken by the other's Unlock. An op is one
// acquisition by either.
func BenchmarkHandoff(b *testing.B) {
	name := redistest.Key(b)
	mus := []*fair.Mutex{fair.New(newClient(b, nil), name, nil), fair.New(newClient(b, nil), name, nil)}
	next := make(chan struct{}, len(mus))
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for range b.N {
			next <- struct{}{}
		}
		close(next)
	}()
	errs := make(chan error, len(mus))
	for _, mu := range mus {
		go func() {
			ctx := relock.WithNewOwner(context.Background())
			for range next {
				lctx, err := mu.Lock(ctx)
				if err == nil {
					err = mu.Unlock(lctx)
				}
				if err != nil {
					errs <- err
					for range next {
					}
					return
				}
			}
			errs <- nil
		}()
	}
	for range mus {
		if err := <-errs; err != nil {
			b.Error(err)
		}
	}
}
