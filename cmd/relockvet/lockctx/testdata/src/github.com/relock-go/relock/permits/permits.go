// Package permits is a stub of the real package's API for the analyzer's tests.
package permits

import (
	"context"
	"time"
)

type Semaphore struct{}

func (s *Semaphore) Acquire(ctx context.Context) (*Permit, error) { return &Permit{}, nil }
func (s *Semaphore) TryAcquire(ctx context.Context, wait time.Duration) (*Permit, error) {
	return &Permit{}, nil
}
func (s *Semaphore) Release(ctx context.Context, id string) error { return nil }

type Permit struct{}

func (p *Permit) ID() string                        { return "" }
func (p *Permit) Context() context.Context          { return nil }
func (p *Permit) Release(ctx context.Context) error { return nil }
