// Package fairlock is Redisson's fair lock (RFairLock), as package fair
// exports it and package election campaigns with it: a reentrant lock
// whose waiters queue, granted in arrival order. Package fair's doc
// states its guarantees. In its non-reentrant mode it is Redisson's
// RedissonNonReentrantFairLock, package nonreentrant's FairMutex: the
// same records and scripts, but an owner's second acquire is refused
// rather than counted.
package fairlock

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// DefaultWaitTimeout is how long a queued waiter may stay silent before
// it is dropped from the queue, Redisson's threadWaitTime.
const DefaultWaitTimeout = 5 * time.Minute

// A Mutex is a fair lock. It is made in place (Init), by the value that
// holds it, and is safe for concurrent use once made.
type Mutex struct {
	l hashlock.Lock
	// keys are every script's KEYS: the lock hash, the queue
	// (redisson_lock_queue:{<name>}), the timeout set
	// (redisson_lock_timeout:{<name>}) and the waiters' channel prefix
	// (redisson_lock__channel:{<name>}), and after them the acquire's
	// fifth, the record of given-up attempts (hashlock.Lock.Gone);
	// keyArgs holds them as script arguments (transport.Call). Arrays, so
	// that a Mutex is one allocation and its names.
	keys                    [5]string
	keyArgs                 [5]any
	acquireCall, unlockCall transport.Call
	waitArg                 any // the wait timeout in ms, a script argument
	// clientChannel: "<channel prefix>:<client id>", where the client's
	// waiters are handed the lock (Channel).
	clientChannel string
	// nonReentrant refuses an owner that holds the lock (InitNonReentrant).
	nonReentrant bool
}

// ops are a Mutex's hashlock.Ops (scripts.go).
type ops Mutex

// defaultWaitArg is DefaultWaitTimeout as a script argument, boxed once.
var defaultWaitArg any = transport.Millis(DefaultWaitTimeout)

// Nil returns the Mutex of a nil *typ of package pkg (hashlock.Nil).
func Nil(pkg, typ string) *Mutex {
	return &Mutex{l: hashlock.Lock{Pkg: pkg, Err: core.NilReceiver(pkg, typ)}}
}

// Init makes m the fair lock named name on rc, with a fixed lease (0:
// the watchdog renews) and a wait timeout (0: DefaultWaitTimeout). Bad
// input (a nil client, an invalid name, a negative lease or wait timeout)
// is not reported here but by every method of m. m must not be copied
// after Init.
func (m *Mutex) Init(rc *relock.Client, name string, lease, waitTimeout time.Duration) {
	m.init("fair", rc, name, lease, waitTimeout)
}

// InitNonReentrant is Init for a non-reentrant fair lock, whose errors
// name package nonreentrant: Lock and TryLock by an owner that holds it
// fail with an error matching relock.ErrNotReentrant, and the hold stays
// as it was.
func (m *Mutex) InitNonReentrant(rc *relock.Client, name string, lease, waitTimeout time.Duration) {
	m.init("nonreentrant", rc, name, lease, waitTimeout)
	m.nonReentrant = true
}

// ObserveAs has the client's Observer told of m as a lock of kind, and
// of its Lock and TryLock calls as op and tryOp: an election's lock is
// "election", taken by Campaign and TryCampaign. Call it after Init.
func (m *Mutex) ObserveAs(kind string, op, tryOp observe.Op) {
	m.l.Kind, m.l.Op, m.l.TryOp = kind, op, tryOp
}

// SetRenewed gives m, made without a fixed lease, a lease of its own in
// place of the client's WatchdogTimeout, which its acquires set and the
// watchdog renews every d/3 (hashlock.Lock.SetRenewed): an election's
// TTL. The caller has checked d. Call it after Init.
func (m *Mutex) SetRenewed(d time.Duration) { m.l.SetRenewed(d) }

func (m *Mutex) init(pkg string, rc *relock.Client, name string, lease, waitTimeout time.Duration) {
	*m = Mutex{waitArg: defaultWaitArg}
	m.l.Init(pkg, rc, name, lease)
	switch {
	case waitTimeout == 0:
		waitTimeout = DefaultWaitTimeout
	case waitTimeout < time.Millisecond && m.l.Err == nil:
		m.l.Err = fmt.Errorf("%s: wait timeout %v: %w", pkg, waitTimeout, relock.ErrInvalidArgument)
	}
	if waitTimeout != DefaultWaitTimeout {
		m.waitArg = transport.Millis(waitTimeout)
	}
	if m.l.C != nil {
		m.clientChannel = layout.LockClientChannel(name, m.l.C.ID)
	}
	m.keys = [5]string{
		name,
		layout.FairQueue(name),
		layout.FairTimeouts(name),
		layout.LockChannel(name),
		m.l.Gone,
	}
	keyArgs := transport.KeyArgs(m.keyArgs[:], m.keys[:]...)
	m.acquireCall.Bind(lua.FairAcquire(), m.keys[:], keyArgs)
	m.unlockCall.Bind(lua.FairUnlock(), m.keys[:4], keyArgs[:4])
	// A late attempt may queue the owner, but its record of given-up
	// attempts lasts a lease all the same, not the wait timeout: an
	// attempt that runs after that costs what a late take costs. Its
	// queue entry waits its turn like any waiter's, and at its turn
	// hand_over (fair_prelude.lua) drops it when its client is gone, or
	// grants it for one lease that nobody renews, as its call is gone.
	m.l.MaxSleep = waitTimeout / 2
	m.l.Listen((*ops)(m))
	m.l.Grants = true
}

// Hash is the hash lock m runs on, which answers the state queries.
func (m *Mutex) Hash() *hashlock.Lock { return &m.l }

// Lock waits in the queue until ctx's owner holds the lock, or ctx ends
// (fair.Mutex.Lock).
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.lock(ctx, -1)
}

// TryLock is Lock waiting at most wait (fair.Mutex.TryLock).
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if err := core.CheckWait(m.l.Pkg, wait); err != nil {
		return nil, err
	}
	return m.lock(ctx, wait)
}

// lock acquires, waiting at most bound (negative: until ctx ends). In
// the non-reentrant mode an owner that holds the lock is refused first
// (hashlock.Lock.RefuseHolder).
func (m *Mutex) lock(ctx context.Context, bound time.Duration) (context.Context, error) {
	if m.nonReentrant {
		if err := m.l.RefuseHolder(ctx); err != nil {
			return nil, err
		}
	}
	return m.l.Lock(ctx, bound)
}

// Unlock releases one hold of ctx's owner (fair.Mutex.Unlock).
func (m *Mutex) Unlock(ctx context.Context) error { return m.l.Unlock(ctx) }

// ForceUnlock deletes the lock whoever holds it (fair.Mutex.ForceUnlock).
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	return m.l.ForceUnlock(ctx, (*ops)(m))
}
