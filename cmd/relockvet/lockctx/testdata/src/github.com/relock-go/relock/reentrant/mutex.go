// Package reentrant is a stub of the real package's API for the analyzer's tests.
package reentrant

import (
	"context"
	"time"

	"github.com/relock-go/relock"
)

type Mutex struct{}

func New(rc *relock.Client, name string) *Mutex { return &Mutex{} }

func (m *Mutex) Name() string                                      { return "" }
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) { return ctx, nil }
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return ctx, nil
}
func (m *Mutex) Unlock(ctx context.Context) error           { return nil }
func (m *Mutex) HoldCount(ctx context.Context) (int, error) { return 0, nil }
