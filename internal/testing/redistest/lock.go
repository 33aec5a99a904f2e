package redistest

import (
	"context"
	"sync"
	"testing"

	"github.com/relock-go/relock"
)

// Lock locks mu with ctx and returns the lock context, failing tb if the
// Lock fails. Every package's tests take their locks through it.
func Lock(tb testing.TB, mu relock.Locker, ctx context.Context) context.Context {
	tb.Helper()
	lctx, err := mu.Lock(ctx)
	if err != nil {
		tb.Fatalf("Lock(%s): %v", mu.Name(), err)
	}
	return lctx
}

// Unlock unlocks mu with ctx, failing tb if the Unlock fails.
func Unlock(tb testing.TB, mu relock.Locker, ctx context.Context) {
	tb.Helper()
	if err := mu.Unlock(ctx); err != nil {
		tb.Fatalf("Unlock(%s): %v", mu.Name(), err)
	}
}

// Churn has workers goroutines each lock and unlock rounds times, round
// i of worker w on the mutex mk(w, i), and returns once all are done. An
// error fails tb (from any goroutine) and ends that worker's loop.
func Churn(tb testing.TB, workers, rounds int, mk func(w, i int) relock.Locker) {
	tb.Helper()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				mu := mk(w, i)
				lctx, err := mu.Lock(context.Background())
				if err != nil {
					tb.Errorf("Lock(%s): %v", mu.Name(), err)
					return
				}
				if err := mu.Unlock(lctx); err != nil {
					tb.Errorf("Unlock(%s): %v", mu.Name(), err)
					return
				}
			}
		})
	}
	wg.Wait()
}
