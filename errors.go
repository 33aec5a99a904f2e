package relock

import "github.com/relock-go/relock/internal/core"

// Errors returned by relock and its lock packages. Match them with
// errors.Is: they are usually wrapped with the lock's name.
var (
	// ErrNotAcquired reports that a lock was not acquired: TryLock gave
	// up, or ctx ended during a wait (the error then also matches
	// ctx.Err()).
	ErrNotAcquired = core.ErrNotAcquired

	// ErrNotHeld reports an unlock by an owner that holds no hold.
	ErrNotHeld = core.ErrNotHeld

	// ErrLockLost is the cause (context.Cause) of a lock context
	// cancelled because its lease was lost or ended.
	ErrLockLost = core.ErrLockLost

	// ErrClosed reports use of a closed Client. It is also the cause of
	// the lock contexts still held when the Client closed.
	ErrClosed = core.ErrClosed

	// ErrInvalidName reports a lock name that is empty or whose braces
	// would put the lock's derived keys in another cluster slot: a "{"
	// not opening a non-empty "{tag}", or a "}" with no "{" before it.
	ErrInvalidName = core.ErrInvalidName

	// ErrInvalidArgument reports a bad argument or option: a nil client,
	// a negative lease or wait, and the like.
	ErrInvalidArgument = core.ErrInvalidArgument

	// ErrUpgrade reports an attempt to take a write lock while holding the
	// read lock of the same read/write lock.
	ErrUpgrade = core.ErrUpgrade

	// ErrNotReentrant reports a Lock or TryLock of a non-reentrant lock
	// by an owner that holds it already. It is returned at once: the
	// call neither waits for itself nor takes a second hold.
	ErrNotReentrant = core.ErrNotReentrant
)
