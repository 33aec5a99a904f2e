package fair

import (
	"context"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/fairlock"
)

// DefaultWaitTimeout is how long a queued waiter may stay silent before
// it is dropped from the queue, Redisson's threadWaitTime.
const DefaultWaitTimeout = fairlock.DefaultWaitTimeout

// Options configure a Mutex. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease: the lock expires Lease after each acquire
	// unless unlocked first, and nothing renews it. Zero (the default)
	// lets the client's watchdog renew the lease while the lock is held.
	// Redis keeps milliseconds: a Lease below 1ms is invalid.
	Lease time.Duration

	// WaitTimeout is how long a queued waiter may go without retrying
	// before others may drop it from the queue (it is presumed dead).
	// Live waiters retry at least every WaitTimeout/2, so they keep their
	// place. Default DefaultWaitTimeout; at least 1ms.
	WaitTimeout time.Duration
}

// A Mutex is a distributed reentrant lock granted in arrival order. It is
// cheap to create, does no I/O until used, and is safe for concurrent
// use; any number of Mutex values may name the same lock. Create one with
// New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Mutex struct {
	m fairlock.Mutex
}

var _ relock.Locker = (*Mutex)(nil)

// New returns the Mutex named name on rc. Bad input (a nil client, an
// invalid name, a negative lease or wait timeout) is not reported here
// but by every method of the returned Mutex.
func New(rc *relock.Client, name string, opts *Options) *Mutex {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := new(Mutex)
	m.m.Init(rc, name, o.Lease, o.WaitTimeout)
	return m
}

// base is the lock m's methods run on: m's own, or for a nil m one
// whose every operation returns an error matching
// relock.ErrInvalidArgument (its Name is empty, its Client nil).
func (m *Mutex) base() *fairlock.Mutex {
	if m == nil {
		return nilMutex
	}
	return &m.m
}

// nilMutex is the lock of a nil *Mutex.
var nilMutex = fairlock.Nil("fair", "Mutex")

// Name returns the lock's name, which is its Redis key.
func (m *Mutex) Name() string { return m.base().Name() }

// Client returns the client the lock was built on.
func (m *Mutex) Client() *relock.Client { return m.base().Client() }

// Lock waits in the queue until ctx's owner holds the lock, or ctx ends.
// When ctx carries no owner a fresh one is created; when its owner holds
// the lock already, Lock re-enters without queueing. The returned context
// is a child of ctx carrying the owner: pass it to nested Lock calls, to
// Unlock, and to the work the lock protects. It is cancelled with cause
// relock.ErrLockLost if the lease is lost, has a deadline at the lease's
// end with a fixed lease, and is cancelled by the Unlock that releases
// the last hold.
//
// If ctx ends first, Lock leaves the queue and returns an error matching
// both relock.ErrNotAcquired and ctx.Err().
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.base().Lock(ctx)
}

// TryLock is Lock waiting at most wait. With wait 0 it takes the lock
// only if it is free and nobody is queued, and never joins the queue. It
// returns an error matching relock.ErrNotAcquired when it gives up.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return m.base().TryLock(ctx, wait)
}

// Unlock releases one hold of ctx's owner. The last hold deletes the lock
// and wakes the queue head. Unlock returns by ctx's deadline, and still
// runs when ctx is done already, within relock.CleanupGrace; the last
// hold's release that Redis does not confirm in that time is sent again
// in the background, and the lease bounds what that cannot do. It
// returns an error matching relock.ErrNotHeld, and changes nothing, when
// ctx's owner holds no hold.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base().Unlock(ctx) }

// ForceUnlock deletes the lock whoever holds it and wakes the queue
// head. It reports whether there was a lock to delete. A lock nobody
// holds whose queue keys are left (its waiters between tries, or gone)
// is handed on as a release would, to the first waiter that listens,
// and when nobody is handed it the queue keys are removed: a live
// waiter behind queues again at its next try; it reports false. Its holders' lock
// contexts, on any relock client, are cancelled with cause
// relock.ErrLockLost within milliseconds (how, and the limits:
// "Force-unlock notices" in docs/wire-layout.md).
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) { return m.base().ForceUnlock(ctx) }

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) { return m.base().IsLocked(ctx) }

// IsHeld reports whether ctx's owner holds the lock, as Redis sees it.
func (m *Mutex) IsHeld(ctx context.Context) (bool, error) { return m.base().IsHeld(ctx) }

// HoldCount returns how many holds ctx's owner has on the lock, as Redis
// counts them.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) { return m.base().HoldCount(ctx) }

// TTL returns the time left on the lock's lease: 0 when the lock is not
// held, -1 when it is held without expiry.
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) { return m.base().TTL(ctx) }
