package redistest

import (
	"context"
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
