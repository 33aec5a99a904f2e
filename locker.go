package relock

import (
	"context"
	"time"

	"github.com/relock-go/relock/internal/core"
)

// A Locker is a distributed lock. Every lock type implements it, and
// MultiLock holds a set of Lockers as one (RedLock, built on one Client a
// master, implements it too).
type Locker interface {
	// Name is the lock's name, its Redis key.
	Name() string

	// Lock waits until it holds the lock or ctx ends. It returns a child
	// of ctx that carries the owner (so a Lock with it re-enters) and is
	// cancelled when the lock is released or its lease is lost.
	Lock(ctx context.Context) (context.Context, error)

	// TryLock is Lock waiting at most wait (0: one attempt). It returns
	// an error matching ErrNotAcquired when it gives up. The returned
	// context derives from ctx, not from the wait bound.
	TryLock(ctx context.Context, wait time.Duration) (context.Context, error)

	// Unlock releases one hold of ctx's owner, or returns an error
	// matching ErrNotHeld. It runs even when ctx is done.
	Unlock(ctx context.Context) error
}

// WithNewOwner returns a child of ctx carrying a fresh owner, for work
// that must not share the owner of ctx: a Lock with it waits for the
// locks ctx's owner holds instead of re-entering them.
func WithNewOwner(ctx context.Context) context.Context {
	ctx, _ = core.WithNewOwner(ctx)
	return ctx
}
