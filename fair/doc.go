// Package fair provides Mutex, a distributed reentrant lock that grants
// waiters in arrival order, wire-compatible with Redisson's RFairLock.
//
// The lock record is the same hash as Redisson's RLock (see package
// reentrant). Waiters queue in the list "redisson_lock_queue:{<name>}",
// and the sorted set "redisson_lock_timeout:{<name>}" holds, for each, the
// instant after which a silent waiter may be dropped. Each waiter listens
// on its own channel, "redisson_lock__channel:{<name>}:<client id>:<owner>",
// and a release wakes the queue head only: one Redis call per handoff, no
// herd.
//
// # Fairness
//
// The lock goes to the queue head. A waiter that arrives while others
// wait, or while the lock is held, joins the tail; so does a holder that
// unlocks and locks again at once: it does not barge back in. Re-entry
// (a Lock with a context whose owner holds the lock) never queues.
//
// # Waiters that stop waiting
//
// A waiter whose Lock gives up (TryLock's wait ends, or its context ends)
// leaves the queue at once. A waiter that dies (its process killed) is
// dropped when it has been silent for Options.WaitTimeout, measured on
// the Redis server's clock. A live waiter is never dropped: it refreshes
// its place at least every WaitTimeout/2 while it waits.
//
// Reentrancy, leases, the watchdog and the lock context behave exactly as
// for reentrant.Mutex, and mutual exclusion holds, as there, only while
// the lease holds.
package fair
