package nonreentrant

import (
	"context"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/fairlock"
)

// FairOptions configure a FairMutex. A nil *FairOptions and zero fields
// mean the defaults documented on each field.
type FairOptions struct {
	// Lease is a fixed lease: the lock expires Lease after each acquire
	// unless unlocked first, and nothing renews it. Zero (the default)
	// lets the client's watchdog renew the lease while the lock is held.
	// Redis keeps milliseconds: a Lease below 1ms is invalid.
	Lease time.Duration

	// WaitTimeout is how long a queued waiter may go without retrying
	// before others may drop it from the queue (it is presumed dead).
	// Live waiters retry at least every WaitTimeout/2, so they keep their
	// place. Default five minutes (fair.DefaultWaitTimeout, Redisson's
	// fairLockWaitTimeout); at least 1ms.
	WaitTimeout time.Duration
}

// A FairMutex is a distributed lock that its owner cannot take twice,
// granted in arrival order: Redisson's RedissonNonReentrantFairLock. It
// is cheap to create, does no I/O until used, and is safe for concurrent
// use; any number of FairMutex values may name the same lock. The zero
// FairMutex is not usable: create one with NewFair.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type FairMutex struct {
	m fairlock.Mutex
}

var _ relock.Locker = (*FairMutex)(nil)

// NewFair returns the FairMutex named name on rc. Bad input (a nil
// client, an invalid name, a negative lease or wait timeout) is not
// reported here but by every method of the returned FairMutex.
func NewFair(rc *relock.Client, name string, opts *FairOptions) *FairMutex {
	var o FairOptions
	if opts != nil {
		o = *opts
	}
	m := new(FairMutex)
	m.m.InitNonReentrant(rc, name, o.Lease, o.WaitTimeout)
	return m
}

// base is the lock m's methods run on: m's own, or for a nil m one
// whose every operation returns an error matching
// relock.ErrInvalidArgument (its Name is empty, its Client nil).
func (m *FairMutex) base() *fairlock.Mutex {
	if m == nil {
		return nilFairMutex
	}
	return &m.m
}

// nilFairMutex is the lock of a nil *FairMutex.
var nilFairMutex = fairlock.Nil("nonreentrant", "FairMutex")

// Name returns the lock's name, which is its Redis key.
func (m *FairMutex) Name() string { return m.base().Name() }

// Client returns the client the lock was built on.
func (m *FairMutex) Client() *relock.Client { return m.base().Client() }

// Lock waits in the queue until ctx's owner holds the lock, or ctx ends.
// When ctx carries no owner a fresh one is created. The returned context
// is a child of ctx carrying the owner: pass it to Unlock and to the
// work the lock protects. It is cancelled with cause relock.ErrLockLost
// if the lease is lost, has a deadline at the lease's end with a fixed
// lease, and is cancelled by Unlock.
//
// When ctx's owner holds the lock already, Lock returns at once an error
// matching relock.ErrNotReentrant, without queueing, and the hold stays
// as it was. If ctx ends first, Lock leaves the queue and returns an
// error matching both relock.ErrNotAcquired and ctx.Err().
func (m *FairMutex) Lock(ctx context.Context) (context.Context, error) {
	return m.base().Lock(ctx)
}

// TryLock is Lock waiting at most wait. With wait 0 it takes the lock
// only if it is free and nobody is queued, and never joins the queue. It
// returns an error matching relock.ErrNotAcquired when it gives up, and
// one matching relock.ErrNotReentrant when ctx's owner holds the lock.
func (m *FairMutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return m.base().TryLock(ctx, wait)
}

// Unlock releases ctx's owner's hold: it hands the lock to the queue
// head, or deletes it when nobody waits. Unlock returns by ctx's
// deadline, and still runs when ctx is done already, within
// relock.CleanupGrace; a release Redis does not confirm in that time is
// sent again in the background, and the lease bounds what that cannot
// do. It returns an error matching relock.ErrNotHeld, and changes
// nothing, when ctx's owner holds no hold.
func (m *FairMutex) Unlock(ctx context.Context) error { return m.base().Unlock(ctx) }

// ForceUnlock deletes the lock whoever holds it and wakes the queue
// head. It reports whether there was a lock to delete. Its holders' lock
// contexts, on any relock client, are cancelled with cause
// relock.ErrLockLost within milliseconds (how, and the limits:
// "Force-unlock notices" in docs/wire-layout.md).
func (m *FairMutex) ForceUnlock(ctx context.Context) (bool, error) { return m.base().ForceUnlock(ctx) }

// IsLocked reports whether anyone holds the lock.
func (m *FairMutex) IsLocked(ctx context.Context) (bool, error) { return m.base().IsLocked(ctx) }

// IsHeld reports whether ctx's owner holds the lock, as Redis sees it.
func (m *FairMutex) IsHeld(ctx context.Context) (bool, error) { return m.base().IsHeld(ctx) }

// HoldCount returns 1 when ctx's owner holds the lock, as Redis sees it,
// and 0 otherwise.
func (m *FairMutex) HoldCount(ctx context.Context) (int, error) { return m.base().HoldCount(ctx) }

// TTL returns the time left on the lock's lease: 0 when the lock is not
// held, -1 when it is held without expiry (a foreign writer's doing).
func (m *FairMutex) TTL(ctx context.Context) (time.Duration, error) { return m.base().TTL(ctx) }
