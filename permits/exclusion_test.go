package permits_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestNeverOverGranted: 8 clients, each as its own process, run 4
// goroutines that each take and give back a permit 15 times, with 3
// permits. The holders at any moment never exceed 3, every acquire
// succeeds, and at the end all 3 permits are back and none is left held.
func TestNeverOverGranted(t *testing.T) {
	redistest.Parallel(t)
	const (
		clients, goroutines, rounds = 8, 4, 15
		limit                       = 3
	)
	raw := srv.Client(t)
	name := redistest.Key(t)
	newSemaphore(t, newClient(t, nil), name, limit, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var holders, most, acquired atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients*goroutines)
	for range clients {
		s := permits.New(newClient(t, nil), name, nil)
		for range goroutines {
			wg.Go(func() {
				for range rounds {
					p, err := s.Acquire(ctx)
					if err != nil {
						errs <- err
						return
					}
					n := holders.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					acquired.Add(1)
					time.Sleep(time.Millisecond)
					holders.Add(-1)
					if err := p.Release(context.Background()); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d acquisitions, at most %d holders at once", acquired.Load(), most.Load())
	if m := most.Load(); m > limit {
		t.Fatalf("%d holders at once with %d permits", m, limit)
	}
	if n := acquired.Load(); n != clients*goroutines*rounds {
		t.Fatalf("%d acquisitions, want %d", n, clients*goroutines*rounds)
	}
	checkCount(t, raw, name, "3")
	if n := raw.Exists(context.Background(), timeoutOf(name)).Val(); n != 0 {
		t.Fatal("permits left held")
	}
}
