package spinlock

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Options configure a Mutex. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease: the lock expires Lease after each acquire
	// unless unlocked first, and nothing renews it. Zero (the default)
	// lets the client's watchdog renew the lease while the lock is held.
	// Redis keeps milliseconds: a Lease below 1ms is invalid.
	Lease time.Duration

	// Backoff paces a waiting Lock's attempts. nil (the default) means
	// Exponential{}, Redisson's default: 1ms, doubling plus a little
	// jitter, up to 128ms. Constant{} retries every 64ms.
	Backoff Backoff
}

// A Mutex is a distributed reentrant lock whose waiters poll. It is cheap
// to create, does no I/O until used, and is safe for concurrent use; any
// number of Mutex values may name the same lock. The zero Mutex is not
// usable: create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Mutex struct {
	l hashlock.Lock
	// keys are the lock's hash, every script's KEYS, and the record of
	// given-up attempts (hashlock.Lock.Gone), the acquire's second;
	// keyArgs holds them as script arguments (transport.Call). Arrays, so that
	// a Mutex is one allocation.
	keys                               [2]string
	keyArgs                            [2]any
	acquireCall, unlockCall, forceCall transport.Call
}

// ops are a Mutex's hashlock.Ops (scripts.go).
type ops Mutex

var _ relock.Locker = (*Mutex)(nil)

// New returns the Mutex named name on rc. Bad input (a nil client, an
// invalid name, a negative lease, an invalid Backoff) is not reported
// here but by every method of the returned Mutex.
func New(rc *relock.Client, name string, opts *Options) *Mutex {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Mutex{}
	m.l.Init("spinlock", rc, name, o.Lease)
	m.keys = [2]string{name, m.l.Gone}
	keyArgs := transport.KeyArgs(m.keyArgs[:], m.keys[:]...)
	m.acquireCall.Bind(lua.SpinAcquire(), m.keys[:], keyArgs)
	m.unlockCall.Bind(lua.SpinUnlock(), m.keys[:1], keyArgs[:1])
	m.forceCall.Bind(lua.SpinForceUnlock(), m.keys[:1], keyArgs[:1])
	backoff, err := checked(o.Backoff)
	if err != nil && m.l.Err == nil {
		m.l.Err = fmt.Errorf("spinlock: %w", err)
	}
	m.l.Poll((*ops)(m), backoff)
	return m
}

// base is the lock m's methods run on: m's own, or for a nil m one
// whose every operation returns an error matching
// relock.ErrInvalidArgument (its Name is empty, its Client nil).
func (m *Mutex) base() *hashlock.Lock {
	if m == nil {
		return nilMutex
	}
	return &m.l
}

// nilMutex is the lock of a nil *Mutex.
var nilMutex = hashlock.Nil("spinlock", "Mutex")

// Name returns the lock's name, which is its Redis key.
func (m *Mutex) Name() string { return m.base().Name }

// Client returns the client the lock was built on.
func (m *Mutex) Client() *relock.Client { return m.base().Client }

// Lock waits until ctx's owner holds the lock, or ctx ends, trying again
// after each of the Backoff's sleeps. When ctx carries no owner a fresh
// one is created. The returned context is a child of ctx carrying the
// owner: pass it to nested Lock calls, to Unlock, and to the work the
// lock protects. It is cancelled with cause relock.ErrLockLost if the
// lease is lost, has a deadline at the lease's end with a fixed lease,
// and is cancelled by the Unlock that releases the last hold.
//
// If ctx ends first, Lock returns an error matching both
// relock.ErrNotAcquired and ctx.Err(); if the client closes, one matching
// relock.ErrClosed. A wait leaves nothing in Redis.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.base().Lock(ctx, -1)
}

// TryLock is Lock waiting at most wait; 0 means one attempt. It returns
// an error matching relock.ErrNotAcquired when it gives up.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return m.base().TryLock(ctx, wait)
}

// Unlock releases one hold of ctx's owner; the last hold deletes the
// lock. It publishes nothing: waiters find the lock free at their next
// attempt. Unlock returns by ctx's deadline, and still
// runs when ctx is done already, within relock.CleanupGrace; the last
// hold's release that Redis does not confirm in that time is sent again
// in the background, and the lease bounds what that cannot do. It returns an error
// matching relock.ErrNotHeld, and changes nothing, when ctx's owner holds
// no hold (never locked, already unlocked, or lost).
func (m *Mutex) Unlock(ctx context.Context) error { return m.base().Unlock(ctx) }

// ForceUnlock deletes the lock whoever holds it, publishing nothing on
// the lock's channels (spin waiters poll). It reports whether there was
// a lock to delete. Its holders' lock contexts, on any relock client,
// are cancelled with cause relock.ErrLockLost within milliseconds (how,
// and the limits: "Force-unlock notices" in docs/wire-layout.md).
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	return m.base().ForceUnlock(ctx, (*ops)(m))
}

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) { return m.base().IsLocked(ctx) }

// IsHeld reports whether ctx's owner holds the lock, as Redis sees it.
func (m *Mutex) IsHeld(ctx context.Context) (bool, error) { return m.base().IsHeld(ctx) }

// HoldCount returns how many holds ctx's owner has on the lock, as Redis
// counts them: Lock calls not yet matched by Unlock.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) { return m.base().HoldCount(ctx) }

// TTL returns the time left on the lock's lease: 0 when the lock is not
// held, -1 when it is held without expiry (a foreign writer's doing).
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) { return m.base().TTL(ctx) }
