// Package semaphore is a stub of the real package's API for the analyzer's tests.
package semaphore

import (
	"context"
	"time"
)

type Semaphore struct{}

func (s *Semaphore) Acquire(ctx context.Context, n int64) error { return nil }
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) error {
	return nil
}
func (s *Semaphore) Release(ctx context.Context, n int64) error { return nil }
