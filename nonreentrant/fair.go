package nonreentrant

import (
	"time"

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
