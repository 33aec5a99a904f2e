package nonreentrant

import (
	"context"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
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
}

// A Mutex is a distributed lock that its owner cannot take twice. It is
// cheap to create, does no I/O until used, and is safe for concurrent
// use; any number of Mutex values may name the same lock. The zero Mutex
// is not usable: create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Mutex struct {
	l hashlock.Lock
	// keys are the KEYS of the release scripts: the lock, its channel
	// (redisson_lock__channel:{<name>}) and its waiters
	// (relock_lock_waiters:{<name>}); acquireKeys the acquire script's:
	// the lock, the waiters and the record of given-up attempts
	// (hashlock.Lock.Gone). The keyArgs arrays hold them as script
	// arguments (transport.Call). Arrays, so that a Mutex is one allocation
	// and its names.
	keys                    [3]string
	acquireKeys             [3]string
	keyArgs                 [3]any
	acquireKeyArgs          [3]any
	acquireCall, unlockCall transport.Call
	// clientChannel: "<channel>:<client id>", where the client's waiters
	// are woken one at a time (Channel).
	clientChannel string
}

// ops are a Mutex's hashlock.Ops (scripts.go).
type ops Mutex

var _ relock.Locker = (*Mutex)(nil)

// New returns the Mutex named name on rc. Bad input (a nil client, an
// invalid name, a negative lease) is not reported here but by every
// method of the returned Mutex.
func New(rc *relock.Client, name string, opts *Options) *Mutex {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Mutex{}
	m.l.Init("nonreentrant", rc, name, o.Lease)
	channel, waiters := layout.LockChannel(name), layout.LockWaiters(name)
	m.keys = [3]string{name, channel, waiters}
	keyArgs := transport.KeyArgs(m.keyArgs[:], m.keys[:]...)
	m.acquireKeys = [3]string{name, waiters, m.l.Gone}
	m.acquireKeyArgs = [3]any{keyArgs[0], keyArgs[2], m.l.Gone}
	m.acquireCall.Bind(lua.NonReentrantAcquire(), m.acquireKeys[:], m.acquireKeyArgs[:])
	m.unlockCall.Bind(lua.Unlock(), m.keys[:], keyArgs)
	if m.l.C != nil {
		m.clientChannel = layout.LockClientChannel(name, m.l.C.ID)
	}
	m.l.Listen((*ops)(m))
	m.l.Grants = true
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
var nilMutex = hashlock.Nil("nonreentrant", "Mutex")

// Name returns the lock's name, which is its Redis key.
func (m *Mutex) Name() string { return m.base().Name }

// Client returns the client the lock was built on.
func (m *Mutex) Client() *relock.Client { return m.base().Client }

// Lock waits until ctx's owner holds the lock, or ctx ends. When ctx
// carries no owner a fresh one is created. The returned context is a
// child of ctx carrying the owner: pass it to Unlock and to the work the
// lock protects. It is cancelled with cause relock.ErrLockLost if the
// lease is lost, has a deadline at the lease's end with a fixed lease,
// and is cancelled by Unlock.
//
// When ctx's owner holds the lock already, Lock returns at once an error
// matching relock.ErrNotReentrant, and the hold stays as it was. If ctx
// ends first, Lock returns an error matching both relock.ErrNotAcquired
// and ctx.Err(), and leaves nothing in Redis.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.lock(ctx, -1)
}

// TryLock is Lock waiting at most wait; 0 means one attempt. It returns
// an error matching relock.ErrNotAcquired when it gives up, and one
// matching relock.ErrNotReentrant when ctx's owner holds the lock.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if err := core.CheckWait("nonreentrant", wait); err != nil {
		return nil, err
	}
	return m.lock(ctx, wait)
}

// lock refuses an owner that holds the lock (hashlock.Lock.RefuseHolder).
func (m *Mutex) lock(ctx context.Context, bound time.Duration) (context.Context, error) {
	if err := m.base().RefuseHolder(ctx); err != nil {
		return nil, err
	}
	return m.base().Lock(ctx, bound)
}

// Unlock releases ctx's owner's hold: it deletes the lock and wakes a
// waiter, as the reentrant lock's last Unlock does. Unlock returns by
// ctx's deadline, and still runs when ctx is done already, within
// relock.CleanupGrace; a release Redis does not confirm in that time is
// sent again in the background, and the lease bounds what that cannot
// do. It returns an error matching relock.ErrNotHeld, and
// changes nothing, when ctx's owner holds no hold (never locked, already
// unlocked, or lost).
func (m *Mutex) Unlock(ctx context.Context) error { return m.base().Unlock(ctx) }

// ForceUnlock deletes the lock whoever holds it and wakes a waiter. It
// reports whether there was a lock to delete. Its holders' lock
// contexts, on any relock client, are cancelled with cause
// relock.ErrLockLost within milliseconds (how, and the limits:
// "Force-unlock notices" in docs/wire-layout.md).
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	return m.base().ForceUnlock(ctx, (*ops)(m))
}

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) { return m.base().IsLocked(ctx) }

// IsHeld reports whether ctx's owner holds the lock, as Redis sees it.
func (m *Mutex) IsHeld(ctx context.Context) (bool, error) { return m.base().IsHeld(ctx) }

// HoldCount returns 1 when ctx's owner holds the lock, as Redis sees it,
// and 0 otherwise.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) { return m.base().HoldCount(ctx) }

// TTL returns the time left on the lock's lease: 0 when the lock is not
// held, -1 when it is held without expiry (a foreign writer's doing).
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) { return m.base().TTL(ctx) }
