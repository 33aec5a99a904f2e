package core

import "errors"

// The sentinel errors. The root package re-exports each one under the same
// name, so errors.Is matches whichever package a caller names.
var (
	ErrNotAcquired     = errors.New("relock: lock not acquired")
	ErrNotHeld         = errors.New("relock: lock not held by this owner")
	ErrLockLost        = errors.New("relock: lock lost")
	ErrClosed          = errors.New("relock: client closed")
	ErrInvalidName     = errors.New("relock: invalid lock name")
	ErrInvalidArgument = errors.New("relock: invalid argument")
	ErrUpgrade         = errors.New("relock: read lock cannot be upgraded to a write lock")
	ErrNotReentrant    = errors.New("relock: non-reentrant lock already held by this owner")
)
