package core

import (
	"context"
	"fmt"
	"time"
)

// The errors of Usable: bad input, so both match ErrInvalidArgument.
var (
	// ErrUnmade is the error of every method of a lock or synchronizer
	// that its package's New did not make (a zero value: it has no
	// client), and of a nil one a failed call returned (a nil
	// permits.Permit). A nil receiver's errors (NilReceiver) match it.
	ErrUnmade error = &narrower{"relock: not made by its package's New (a zero value, or the nil result of a failed call)", ErrInvalidArgument}

	// ErrNilContext is the error of every operation given a nil
	// context: most often an Unlock deferred before the error check of
	// a Lock that failed, and so returned none.
	ErrNilContext error = &narrower{"relock: nil context (a failed Lock or Acquire returns none: check its error before deferring Unlock or Release)", ErrInvalidArgument}
)

// Usable is the first check of every operation of a lock or
// synchronizer given ctx: ErrUnmade when the value was not made by its
// package's New (made false: a lock's client is nil, a MultiLock has no
// members), ErrNilContext when ctx is nil. Client.Check and Begin make it
// for the operations of a lock on c; an operation that reads ctx or its
// value before them makes it first.
func Usable(made bool, ctx context.Context) error {
	switch {
	case !made:
		return ErrUnmade
	case ctx == nil:
		return ErrNilContext
	}
	return nil
}

// CheckWait checks the wait a TryLock, TryAcquire or TryAwait is given
// (0: one attempt): a negative one is an error matching
// ErrInvalidArgument, prefixed with pkg, the package's name. It must be
// refused because inside the packages a negative bound means "until ctx
// ends", the wait of Lock, Acquire and Await.
func CheckWait(pkg string, wait time.Duration) error {
	if wait < 0 {
		return fmt.Errorf("%s: negative wait %v: %w", pkg, wait, ErrInvalidArgument)
	}
	return nil
}

// ValidMillis reports whether d is a lease or TTL Redis can keep: zero
// (none, or the default) or at least a millisecond, Redis's unit.
func ValidMillis(d time.Duration) bool { return d == 0 || d >= time.Millisecond }
