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
// let someone else in. When renewals fail (Redis hangs, a partition),
// that is Options.LeaseMargin earlier (a tenth of WatchdogTimeout by
// default): the last successful renewal's send time plus the lease, less
// the margin, while the server holds the lock for at least the lease
// after it applied that renewal. A fixed lease's context ends at the
// lease's end, its deadline, or the margin earlier when LeaseMargin is
// set. Work that must not overlap a successor's should check that
// context, and writes to other systems should carry a fencing token
// (reentrant.Options.Fencing) that those systems check.
//
// # Deadlines
//
// A call's time belongs to its caller. Every Redis round trip a call
// makes runs under its context's deadline, so every blocking call of
// every package returns by that deadline, whatever Redis does (refuses
// connections, accepts them and never answers, or is frozen), give or
// take CleanupGrace (25 ms): the time a call may run past its context's
// end to finish what must not be left half done. When the deadline ends a
// call, its error matches context.DeadlineExceeded, and, for an acquire,
// ErrNotAcquired, with Redis's own error wrapped (errors.Is and errors.As
// see all three); a latch's Await, which acquires nothing, matches the
// context's error only.
//
//   - Acquires (Lock, TryLock, RLock, Acquire, Await, Campaign, Do):
//     by the deadline, plus up to CleanupGrace when a wait leaves a
//     queue; without a deadline each round trip is bounded by OpTimeout
//     (5 s), and the call waits until it acquires or ctx is cancelled.
//   - Releases (Unlock, RUnlock, Permit.Release, Resign, a semaphore's
//     Release): by the deadline; within CleanupGrace when ctx is done
//     already, since a release must run even then; OpTimeout without a
//     deadline. A lock context cancelled while its release is under way
//     does not cut the release short.
//   - Queries (IsLocked, HoldCount, TTL, counts, Leader, inspect's Read
//     and List): by the deadline; without one, by the go-redis client's
//     own read, write and dial timeouts (and its retries).
//
// A context without a deadline sets no timer where the go-redis client
// bounds each round trip on its own: a client of one server (or a
// failover client) whose dial, read and write timeouts are at most
// OpTimeout, as go-redis's defaults are. go-redis cuts reads and writes
// off at a context's deadline, never at its cancellation, so a timer
// would bound them no closer.
//
// What must still happen after the caller gave up runs in the
// background, in goroutines the Client owns (Shutdown waits for them, or
// cuts them off when its context ends), each bounded by OpTimeout: an
// unlock that Redis did not confirm, a waiter leaving a fair lock's
// queue, the undo of an acquire whose reply was lost, the permits a
// semaphore acquire took after its caller left. An owner's next acquire
// of the same lock waits for them, so that a late undo cannot release a
// newer hold. What they cannot finish is left to the lease: nothing
// stays held longer than its lease once its holder has given up.
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
// # Forgotten unlocks
//
// A lock context dropped without its Unlock (a goroutine returned early,
// a deferred Unlock given the wrong context) would keep its lock for
// ever: the watchdog renews every hold its Client records. relock
// catches it instead. When a Lock made the owner (its ctx carried none),
// only the contexts its holds return carry that owner; once a garbage
// collection finds every one of them unreachable, nobody can unlock
// those holds. They are then reported: a warning on Options.Logger
// naming the lock, its owner and how long it was held (and, with
// Options.LeakStacks, the stack of the Lock call), and the Observer's
// HoldEnded with a cause matching ErrLeaked (the otel module counts
// relock.hold.leaked). Their renewal stops and the lock is left to its
// lease, not unlocked: work that went on without the context stays
// exclusive for that long. Fixed-lease holds are reported too.
//
// Limits: nothing is reported before a garbage collection runs (the
// runtime forces one at least every two minutes, unless GOGC=off); a
// child of the lock context that is not cancelled keeps it reachable,
// even when the child itself was dropped (context.WithCancel registers
// the child with its parent), and so does a nested Lock given such a
// child rather than the lock context itself; the holds of an owner made
// by WithNewOwner, or by a MultiLock or a RedLock, are never reported,
// since a context the caller keeps may still unlock them; nor are
// permits, elections and latches. A re-entered hold, or holds of several
// locks taken with one lock context, are reported once every context
// they returned is gone. To hold a lock for the life of a process, keep
// its context (and watch its Done: that is how a lost lease is told).
// See docs/leaks.md.
//
// # Shutting down
//
// Close, or Shutdown with a context of the caller's, ends every wait with
// ErrClosed, cancels the contexts of the locks the Client still holds
// with cause ErrClosed, and then releases those locks in Redis, so that
// waiters elsewhere get them at once rather than after the lease. Call
// it when the process is asked to stop (SIGTERM).
package relock
