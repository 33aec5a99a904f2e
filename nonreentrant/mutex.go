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

// zz_methods.go has the methods every hash-lock facade shares, written
// from one template (internal/facadegen).
//
//go:generate go run ../internal/facadegen

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

// lock refuses an owner that holds the lock (hashlock.Lock.RefuseHolder)
// and then acquires, waiting at most bound (negative: until ctx ends).
func (m *Mutex) lock(ctx context.Context, bound time.Duration) (context.Context, error) {
	if err := m.base().RefuseHolder(ctx); err != nil {
		return nil, err
	}
	return m.base().Lock(ctx, bound)
}

// tryLock is TryLock: lock, after checking wait.
func (m *Mutex) tryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if err := core.CheckWait("nonreentrant", wait); err != nil {
		return nil, err
	}
	return m.lock(ctx, wait)
}
