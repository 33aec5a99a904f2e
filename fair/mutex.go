package fair

import (
	"time"

	"github.com/relock-go/relock/internal/fairlock"
)

// zz_methods.go has the methods every hash-lock facade shares, written
// from one template (internal/facadegen).
//
//go:generate go run ../internal/facadegen

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
