package reentrant_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// The hot paths of the reentrant lock on the package's redis-server. Run
// with: go test -run '^$' -bench . ./reentrant

// BenchmarkLockUnlock is the uncontended path: one acquire script call,
// the local hold record and watchdog registration, one unlock script call.
func BenchmarkLockUnlock(b *testing.B) {
	mu := reentrant.New(newClient(b, nil), redistest.Key(b), nil)
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

// BenchmarkLockUnlockNewOwner is BenchmarkLockUnlock for a context that
// carries no owner, as in mu.Lock(ctx) with a request's context: each
// Lock makes an owner, and tracks the context it returns so that a
// forgotten Unlock is caught (see docs/leaks.md).
func BenchmarkLockUnlockNewOwner(b *testing.B) {
	mu := reentrant.New(newClient(b, nil), redistest.Key(b), nil)
	ctx := context.Background()
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
// scripts (acquire, unlock) called straight through go-redis, without the
// hold record, the watchdog or the contexts. The difference between the
// two is what the Go side of Lock+Unlock costs.
func BenchmarkScripts(b *testing.B) {
	rdb := srv.Client(b)
	name := redistest.Key(b)
	keys := []string{name, channelOf(name), "relock_lock_waiters:{" + name + "}"}
	field := "5b7e3f7e-8d4a-4c1e-9d0b-2f6f0d1c3a44:1"
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if n, err := lua.Acquire().Run(ctx, rdb, []string{keys[0], keys[2]}, 30000, field, "0").Int64(); n != 1 || err != nil {
			b.Fatalf("acquire: %d, %v", n, err)
		}
		if err := lua.Unlock().Run(ctx, rdb, keys, 30000, field, "PUBLISH", "1").Err(); err != nil {
			b.Fatalf("unlock: %v", err)
		}
	}
}

// BenchmarkTryLockHeld is one failed script call: TryLock with no wait on
// a lock another owner holds.
func BenchmarkTryLockHeld(b *testing.B) {
	rc := newClient(b, nil)
	name := redistest.Key(b)
	holder := reentrant.New(rc, name, nil)
	hctx := redistest.Lock(b, holder, relock.WithNewOwner(context.Background()))
	defer redistest.Unlock(b, holder, hctx)
	mu := reentrant.New(rc, name, nil)
	ctx := relock.WithNewOwner(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := mu.TryLock(ctx, 0); !errors.Is(err, relock.ErrNotAcquired) {
			b.Fatalf("TryLock of a held lock: %v", err)
		}
	}
}

// BenchmarkContended is the wait loop under contention: four clients,
// each its own "process" with one worker, on one lock; an op is one
// acquisition by any of them.
func BenchmarkContended(b *testing.B) {
	name := redistest.Key(b)
	const workers = 4
	mus := make([]*reentrant.Mutex, workers)
	for i := range mus {
		mus[i] = reentrant.New(newClient(b, nil), name, nil)
	}
	next := make(chan struct{}, workers)
	b.ReportAllocs()
	b.ResetTimer()
	go func() {
		for range b.N {
			next <- struct{}{}
		}
		close(next)
	}()
	errs := make(chan error, workers)
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
	for range workers {
		if err := <-errs; err != nil {
			b.Error(err)
		}
	}
}

// BenchmarkNew is what a Mutex costs to make, as code that locks many
// names makes one per name, or per call.
func BenchmarkNew(b *testing.B) {
	rc := newClient(b, nil)
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("%s:%d", redistest.Key(b), i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if reentrant.New(rc, names[i%len(names)], nil) == nil {
			b.Fatal("nil Mutex")
		}
		i++
	}
}

// BenchmarkParallelLockUnlock is the shape of a service: one Client
// shared by 64 goroutines (b.SetParallelism over GOMAXPROCS), each
// locking and unlocking names of its own among 1000, with the client's
// pipelining on and off.
func BenchmarkParallelLockUnlock(b *testing.B) {
	for _, off := range []bool{false, true} {
		b.Run(fmt.Sprintf("pipelining=%v", !off), func(b *testing.B) {
			rc := newClient(b, &relock.Options{DisablePipelining: off})
			base := redistest.Key(b)
			mus := make([]*reentrant.Mutex, 1000)
			for i := range mus {
				mus[i] = reentrant.New(rc, fmt.Sprintf("%s:%d", base, i), nil)
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					mu := mus[next.Add(1)%int64(len(mus))]
					lctx, err := mu.Lock(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if err := mu.Unlock(lctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
