// Package relock is a stub of the real package's API for the analyzer's tests.
package relock

import (
	"context"
	"time"
)

type Locker interface {
	Name() string
	Lock(ctx context.Context) (context.Context, error)
	TryLock(ctx context.Context, wait time.Duration) (context.Context, error)
	Unlock(ctx context.Context) error
}

type Client struct{}

func (rc *Client) Close() error                       { return nil }
func (rc *Client) Shutdown(ctx context.Context) error { return nil }

func WithNewOwner(ctx context.Context) context.Context { return ctx }

var ErrNotAcquired error
