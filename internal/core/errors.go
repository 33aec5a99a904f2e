package core

import "errors"

// The sentinel errors. The root package re-exports each one under the same
// name, so errors.Is matches whichever package a caller names.
var (
	ErrNotAcquired     = errors.New("relock: lock not acquired")
	ErrNotHeld         = errors.New("relock: lock not held by this owner")
	ErrLockLost        = errors.New("relock: lock lost")
	ErrInvalidName     = errors.New("relock: invalid lock name")
	ErrInvalidArgument = errors.New("relock: invalid argument")
	ErrUpgrade         = errors.New("relock: read lock cannot be upgraded to a write lock")
	ErrNotReentrant    = errors.New("relock: non-reentrant lock already held by this owner")
	ErrUnlocked        = errors.New("relock: unlocked")

	// ErrNoOwner is the most common ErrNotHeld: an Unlock given the
	// context Lock was given rather than the one it returned.
	ErrNoOwner error = &narrower{"relock: this context carries no lock owner: unlock with the context Lock returned", ErrNotHeld}

	// ErrLeaked is an ErrLockLost: the lock is left to its lease, which
	// the watchdog no longer renews.
	ErrLeaked error = &narrower{"relock: lock context dropped without Unlock; renewal stopped, the lease is left to run out", ErrLockLost}
)

// A narrower is a sentinel that is a case of a broader one: errors.Is
// matches both, and its text is its own.
type narrower struct {
	text  string
	broad error
}

func (e *narrower) Error() string { return e.text }

// Unwrap returns the broader sentinel.
func (e *narrower) Unwrap() error { return e.broad }
