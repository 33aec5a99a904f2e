package reentrant

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock"
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

	// Fencing makes every acquire, re-entry included, increment the
	// counter "redisson_lock_token:{<name>}" and record the new value as
	// the hold's token (Token), as Redisson's RFencedLock does.
	Fencing bool
}

// A Mutex is a distributed reentrant lock. It is cheap to create, does no
// I/O until used, and is safe for concurrent use; any number of Mutex
// values may name the same lock. The zero Mutex is not usable: create one
// with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Mutex struct {
	l hashlock.Lock
	// keys are the KEYS of the release scripts: the lock, its channel
	// (redisson_lock__channel:{<name>}) and its waiters
	// (relock_lock_waiters:{<name>}); acquireKeys the acquire script's:
	// the lock, the waiters, with fencing the token counter
	// (redisson_lock_token:{<name>}), and the record of given-up
	// attempts (hashlock.Lock.Gone). The keyArgs arrays hold them as
	// script arguments (transport.Call). Arrays, so that a Mutex is one
	// allocation and its names.
	keys                    [3]string
	acquireKeys             [4]string
	keyArgs                 [3]any
	acquireKeyArgs          [4]any
	acquireCall, unlockCall transport.Call
	// clientChannel: "<channel>:<client id>", where the client's waiters
	// are woken one at a time (Channel).
	clientChannel string
	fencing       bool
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
	m := &Mutex{fencing: o.Fencing}
	m.l.Init("reentrant", rc, name, o.Lease)
	channel, waiters := layout.LockChannel(name), layout.LockWaiters(name)
	m.keys = [3]string{name, channel, waiters}
	keyArgs := transport.KeyArgs(m.keyArgs[:], m.keys[:]...)
	m.acquireKeys = [4]string{name, waiters}
	m.acquireKeyArgs = [4]any{keyArgs[0], keyArgs[2]}
	acquire, n := lua.Acquire(), 2
	if o.Fencing {
		token := layout.LockToken(name)
		m.acquireKeys[2], m.acquireKeyArgs[2] = token, token
		acquire, n = lua.FencedAcquire(), 3
	}
	m.acquireKeys[n], m.acquireKeyArgs[n] = m.l.Gone, m.l.Gone
	n++
	m.acquireCall.Bind(acquire, m.acquireKeys[:n], m.acquireKeyArgs[:n])
	m.unlockCall.Bind(lua.Unlock(), m.keys[:], keyArgs)
	if m.l.C != nil {
		m.clientChannel = layout.LockClientChannel(name, m.l.C.ID)
	}
	m.l.Listen((*ops)(m))
	// A fenced waiter is never handed the lock (a grant would draw no
	// token): it is woken to try, and each acquire counts a hold.
	m.l.Grants = !o.Fencing
	return m
}

// Token returns the fencing token of ctx's owner's current hold: the
// value the acquire of its latest Lock drew. It needs Options.Fencing and
// does no I/O.
func (m *Mutex) Token(ctx context.Context) (int64, error) {
	if err := m.base().Check(ctx); err != nil {
		return 0, err
	}
	if !m.fencing {
		return 0, fmt.Errorf("reentrant: %q has no fencing token without Options.Fencing: %w", m.base().Name, relock.ErrInvalidArgument)
	}
	return m.base().Token(ctx)
}
