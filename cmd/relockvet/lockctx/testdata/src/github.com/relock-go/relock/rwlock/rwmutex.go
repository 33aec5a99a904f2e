// Package rwlock is a stub of the real package's API for the analyzer's tests.
package rwlock

import (
	"context"
	"time"
)

type RWMutex struct{}

func (rw *RWMutex) RLock(ctx context.Context) (context.Context, error) { return ctx, nil }
func (rw *RWMutex) TryRLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return ctx, nil
}
func (rw *RWMutex) RUnlock(ctx context.Context) error                 { return nil }
func (rw *RWMutex) Lock(ctx context.Context) (context.Context, error) { return ctx, nil }
func (rw *RWMutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return ctx, nil
}
func (rw *RWMutex) Unlock(ctx context.Context) error { return nil }
func (rw *RWMutex) Reader() *Side                    { return &Side{} }

type Side struct{}

func (s *Side) Lock(ctx context.Context) (context.Context, error) { return ctx, nil }
func (s *Side) Unlock(ctx context.Context) error                  { return nil }
