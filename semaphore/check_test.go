package semaphore_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// TestNeverOverGranted: 8 clients, each its own "process", run 4
// goroutines each that take 1 or 2 of 3 permits, hold them briefly and
// release them, 25 times. The permits held at once, counted locally as
// each holder enters and leaves, never exceed 3, and the count in Redis
// is 3 again at the end.
func TestNeverOverGranted(t *testing.T) {
	redistest.Parallel(t)
	const (
		clients    = 8
		goroutines = 4
		permits    = 3
		rounds     = 25
	)
	bg := context.Background()
	name := redistest.Key(t)
	sems := make([]*semaphore.Semaphore, clients)
	for i := range sems {
		sems[i] = semaphore.New(newClient(t, nil), name, nil)
	}
	if ok, err := sems[0].TrySetPermits(bg, permits); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	ctx, cancel := context.WithTimeout(bg, 2*time.Minute)
	defer cancel()
	var held, most, grants atomic.Int64
	var wg sync.WaitGroup
	for c, s := range sems {
		for g := range goroutines {
			n := int64(1 + (c+g)%2)
			wg.Go(func() {
				for range rounds {
					if err := s.Acquire(ctx, n); err != nil {
						t.Errorf("Acquire(%d): %v", n, err)
						return
					}
					now := held.Add(n)
					for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
					}
					grants.Add(1)
					time.Sleep(time.Millisecond)
					held.Add(-n)
					if err := s.Release(bg, n); err != nil {
						t.Errorf("Release(%d): %v", n, err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	t.Logf("%d grants, at most %d permits held at once", grants.Load(), most.Load())
	if m := most.Load(); m > permits {
		t.Fatalf("%d permits held at once, of %d", m, permits)
	}
	if m := most.Load(); m < 2 {
		t.Fatalf("at most %d permit held at once: the holders never overlapped", m)
	}
	if g := grants.Load(); g != clients*goroutines*rounds {
		t.Fatalf("%d grants, want %d", g, clients*goroutines*rounds)
	}
	if n, err := sems[0].AvailablePermits(bg); err != nil || n != permits {
		t.Fatalf("AvailablePermits at the end = %d, %v; want %d", n, err, permits)
	}
	srv.Client(t).Del(bg, name)
}
