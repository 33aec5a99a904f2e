// Package spinlock provides Mutex, a distributed reentrant lock whose
// waiters poll instead of listening, wire-compatible with Redisson's
// RSpinLock.
//
// The lock is the same Redis hash as Redisson's RLock (and package
// reentrant's Mutex): named after the lock, one field
// "<client id>:<owner>" counting the owner's holds, the hash's TTL as the
// lease. A spin lock and an RLock of the same name therefore exclude each
// other. What differs is the wake-up: a spin lock uses no pub/sub for it.
// Its releases (Unlock, ForceUnlock) publish nothing on the lock's
// channels, and its waiters subscribe to nothing; they try again after
// each sleep of a Backoff, Redisson's exponential one by default (1ms
// doubling to 128ms). That costs no subscription per lock or waiter,
// which is why Redisson offers it for large clusters, at the price of an
// attempt per sleep while waiting and up to one sleep between a release
// and the next holder. (Like every relock client, a holder's listens on
// one channel of its own for force-unlocks: see Mutex.ForceUnlock.)
//
// Because a spin lock's release publishes nothing, waiters of an RLock
// on the same name (Redisson's, or package reentrant's) are not woken by
// it: they find the lock free when their sleep, bounded by the lock's
// TTL when they last tried, runs out. A spin waiter, which registers
// nowhere, is never handed the lock by a reentrant release either: it
// takes it at its next attempt if nobody was handed it first.
//
// Reentrancy follows the context: Lock returns a context carrying the
// owner, and a Lock with that context (in the same goroutine or any
// goroutine it hands the context to) re-enters instead of waiting. Every
// Lock needs its own Unlock.
//
// Mutual exclusion holds only while the lease holds. Without a fixed lease
// the client's watchdog renews it while the lock is held, and the context
// Lock returned is cancelled with cause relock.ErrLockLost when a renewal
// finds the lock gone or cannot reach Redis before the lease may have
// expired. With a fixed lease (Options.Lease) nothing renews it, and the
// returned context's deadline is the lease's end. Either way a ForceUnlock
// on any relock client cancels it within milliseconds (Mutex.ForceUnlock).
//
// Waiters are not served in any order: whoever tries first after a
// release wins, and a holder that unlocks and locks again at once
// usually keeps the lock. A waiting Lock ends when its context does, or
// with relock.ErrClosed as soon as the client closes, and leaves nothing
// in Redis.
package spinlock
