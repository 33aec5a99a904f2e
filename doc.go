// Package relock provides distributed locks on Redis that are
// wire-compatible with Redisson's lock family, so Go services using relock
// and Java services using Redisson can share locks.
//
// A Client wraps a go-redis client and owns what every lock on it shares:
// one subscription connection through which waiters are woken when a lock
// is released (waiters never poll), and one watchdog goroutine that keeps
// the leases of held locks alive in batched rounds. The lock types live in
// their own packages, all implementing Locker: reentrant (Redisson's RLock
// and RFencedLock), fair (RFairLock), rwlock (RReadWriteLock), and the
// combinators multilock (all or none of several Lockers) and redlock (a
// quorum of independent masters).
//
// # Owners and reentrancy
//
// Go has no thread identity, so the owner of a lock travels in the
// context. Lock returns a context that carries the owner; a Lock with that
// context (or one derived from it) re-enters, counting holds, and each
// Unlock with it releases one hold. Goroutines started with such a context
// share the owner: that is the contract. WithNewOwner starts a fresh owner.
//
// # What is guaranteed
//
// Mutual exclusion holds only while the lease holds. A holder that stops
// renewing (a partition, a long GC pause, a dead process) loses the lock
// when its lease expires on the server, and another owner may then take
// it. relock tells the holder: the context returned by Lock is cancelled
// with cause ErrLockLost no later than the instant at which the server may
// let someone else in. Work that must not overlap a successor's should
// check that context, and writes to other systems should carry a fencing
// token (reentrant.Options.Fencing) that those systems check.
//
// # Failover
//
// Redis replicates asynchronously, so a master that fails right after
// granting a lock may be replaced by a replica that never saw it. By
// default every acquire waits, on its own connection, until the replicas
// the master reports as connected have it (WAIT, or WAITAOF with an
// append-only file), and an acquire none of them confirms is undone and
// reported as ErrNotAcquired, as Redisson's checkLockSyncedSlaves does.
// Options.SyncReplicas sets a fixed count or turns this off (SyncOff).
//
// # Shutting down
//
// Close, or Shutdown with a context of the caller's, ends every wait with
// ErrClosed, cancels the contexts of the locks the Client still holds
// with cause ErrClosed, and then releases those locks in Redis, so that
// waiters elsewhere get them at once rather than after the lease. Call
// it when the process is asked to stop (SIGTERM).
package relock
