package redistest

import (
	"context"
	"sync"
	"testing"
)

// Background runs f in a goroutine until it returns or tb ends: tb's
// cleanup cancels f's context and waits for it.
func Background(tb testing.TB, f func(ctx context.Context)) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { f(ctx) })
	tb.Cleanup(func() { cancel(); wg.Wait() })
}
