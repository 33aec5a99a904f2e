package relock

import (
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/transport"
)

// MaxCount is the largest count (a semaphore's permits, an acquire's or
// a release's count, a latch's count) the synchronizers take, 2^53: Redis
// runs their scripts with Lua numbers, doubles that hold integers exactly
// only that far. A larger count is an error matching ErrInvalidArgument,
// never rounded.
const MaxCount = transport.MaxCount

// Errors returned by relock and its lock packages. Match them with
// errors.Is: they are usually wrapped with the lock's name.
var (
	// ErrNotAcquired reports that a lock was not acquired: TryLock gave
	// up, or ctx ended during a wait (the error then also matches
	// ctx.Err()).
	ErrNotAcquired = core.ErrNotAcquired

	// ErrNotHeld reports an unlock by an owner that holds no hold.
	ErrNotHeld = core.ErrNotHeld

	// ErrNoOwner reports an unlock (or a release, a resignation) with a
	// context that carries no lock owner: most often the context passed
	// to Lock rather than the one Lock returned, which carries the owner.
	// It matches ErrNotHeld. The lock stays held: unlock with the
	// context Lock returned (the relockvet analyzer finds such calls).
	ErrNoOwner = core.ErrNoOwner

	// ErrLockLost is the cause (context.Cause) of a lock context
	// cancelled because its lease was lost or ended.
	ErrLockLost = core.ErrLockLost

	// ErrLeaked is the cause an Observer is told (observe.HoldEnd) of a
	// hold ended because every context its Lock calls returned became
	// unreachable without an Unlock: a forgotten Unlock. Its renewal
	// stops and the lock is left to its lease. It matches ErrLockLost
	// too. See docs/leaks.md.
	ErrLeaked = core.ErrLeaked

	// ErrUnlocked is the cause (context.Cause) of a lock context
	// cancelled by the Unlock that released the owner's last hold, or,
	// for a re-entry's context, by that re-entry's Unlock, so that a
	// holder can tell its own Unlock from a parent's cancellation
	// (context.Canceled) or a lost lock (ErrLockLost).
	ErrUnlocked = core.ErrUnlocked

	// ErrClosed reports use of a closed Client, pubsub.Hub or
	// watchdog.Watchdog (their packages' ErrClosed is this value). It is
	// also the cause of the lock contexts still held when the Client
	// closed.
	ErrClosed = core.ErrClosed

	// ErrInvalidName reports a lock name that is empty or whose braces
	// would put the lock's derived keys in another cluster slot: a "{"
	// not opening a non-empty "{tag}", or a "}" with no "{" before it.
	ErrInvalidName = core.ErrInvalidName

	// ErrInvalidArgument reports a bad argument or option: a nil client,
	// a negative lease or wait, and the like; a nil context (often the
	// one a failed Lock returned); a lock or synchronizer that its
	// package's New did not make (a zero value), or a nil
	// *permits.Permit.
	ErrInvalidArgument = core.ErrInvalidArgument

	// ErrUpgrade reports an attempt to take a write lock while holding the
	// read lock of the same read/write lock.
	ErrUpgrade = core.ErrUpgrade

	// ErrNotReentrant reports a Lock or TryLock of a non-reentrant lock
	// by an owner that holds it already. It is returned at once: the
	// call neither waits for itself nor takes a second hold.
	ErrNotReentrant = core.ErrNotReentrant
)
