package spinlock

import (
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/hashlock"
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
