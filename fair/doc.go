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
// leaves the queue at once. A waiter's deadline starts as Redisson sets
// it: the deadline of the waiter ahead (or the lock's TTL) plus
// Options.WaitTimeout. A live waiter retries at least every
// WaitTimeout/2, and each retry moves its deadline to at least its
// position in the queue times WaitTimeout from now, so it keeps its place
// however long it waits (Redisson's waiters are dropped once their first
// deadline passes, alive or not). A waiter that dies (its process killed)
// stops retrying and is dropped once it is at the head of the queue and
// its deadline has passed: WaitTimeout after its last retry, or its
// initial deadline if that is later. Deadlines are read on the Redis
// server's clock, so clients with skewed clocks cannot drop each other
// early.
//
// Reentrancy, leases, the watchdog and the lock context behave exactly as
// for reentrant.Mutex, and mutual exclusion holds, as there, only while
// the lease holds.
package fair
