// Package relock provides distributed locks on Redis that are
// wire-compatible with Redisson's lock family, so Go services using relock
// and Java services using Redisson can share locks.
//
// A Client wraps a go-redis client and owns what every lock on it shares:
// the subscription through which waiters are woken when a lock is
// released (one connection, or one per master in sharded mode; spinlock's
// waiters poll instead), and one watchdog goroutine that keeps the leases
// of held locks alive in batched rounds. The lock types live in their own
// packages, all implementing Locker: reentrant, fair, rwlock, spinlock,
// nonreentrant, grouplock, and the combinators multilock (over Lockers)
// and redlock (over one Client a master); semaphore, permits, latch and
// election are built the same way.
//
// Go has no thread identity, so the owner of a lock travels in the
// context. Lock returns a context that carries the owner; a Lock with that
// context (or one derived from it) re-enters, counting holds, and each
// Unlock with it releases one hold. Goroutines started with such a context
// share the owner: that is the contract, and a Lock of the same lock in
// such a goroutine re-enters at once instead of waiting for its parent.
// WithNewOwner starts a fresh owner, for work that must wait.
//
// Mutual exclusion holds only while the lease holds. The context Lock
// returns is cancelled with cause ErrLockLost no later than the instant at
// which the server may let someone else in (Options.LeaseMargin earlier
// when renewals fail); writes to other systems should carry a fencing
// token. Every call returns by its context's deadline, whatever Redis
// does. Close or Shutdown ends every wait and releases the locks the
// Client holds; call it when the process is asked to stop.
//
// The rest is in the repository's docs: docs/guarantees.md (what is
// guaranteed and its limits, each call's deadline bound, failover, the
// tests behind each), docs/leaks.md (an Unlock forgotten: what is
// reported, and when), docs/primitives.md (each lock type),
// docs/errors.md, and docs/architecture.md (how the code is layered).
package relock
