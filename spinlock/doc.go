// Package spinlock provides Mutex, a distributed reentrant lock whose
// waiters poll instead of listening, wire-compatible with Redisson's
// RSpinLock.
//
// # Guarantees
//
//   - Mutual exclusion, among relock and Redisson clients alike (a spin
//     lock and an RLock of the same name exclude each other), but only
//     while the lease holds. The lease, the watchdog and the lock context
//     behave as for reentrant.Mutex: the context Lock returned is
//     cancelled with cause relock.ErrLockLost when the lease is lost, or
//     within milliseconds of a ForceUnlock on any relock client, and a
//     fixed lease (Options.Lease) is its deadline.
//   - Reentrancy follows the context, as for reentrant.Mutex: a Lock with
//     the context Lock returned re-enters; every Lock needs its own Unlock.
//   - No order: whoever tries first after a release wins, and a holder
//     that unlocks and locks again at once usually keeps the lock.
//   - ctx bounds the wait: a waiting Lock ends when its context does
//     (an error matching relock.ErrNotAcquired and ctx.Err()), or with
//     relock.ErrClosed as soon as the client closes, and leaves nothing
//     in Redis. The returned context is a child of ctx; its end does not
//     release the lock, Unlock does.
//
// # Redis layout
//
// The lock is the same Redis hash as Redisson's RLock (and package
// reentrant's Mutex): named after the lock, one field
// "<client id>:<owner>" counting the owner's holds, the hash's TTL as the
// lease. What differs is the wake-up: a spin lock uses no pub/sub for it.
// Its releases (Unlock, ForceUnlock) publish nothing on the lock's
// channels, and its waiters subscribe to nothing; they try again after
// each sleep of a Backoff, Redisson's exponential one by default (1ms
// doubling to 128ms). That costs no subscription per lock or waiter,
// which is why Redisson offers it for large clusters, at the price of an
// attempt per sleep while waiting and up to one sleep between a release
// and the next holder. (A holder's client, like every relock client,
// listens on one channel of its own for force-unlocks: see
// Mutex.ForceUnlock.)
//
// Because a spin lock's release publishes nothing, waiters of an RLock
// on the same name (Redisson's, or package reentrant's) are not woken by
// it: they find the lock free when their sleep, bounded by the lock's
// TTL when they last tried, runs out. A spin waiter, which registers
// nowhere, is never handed the lock by a reentrant release either: it
// takes it at its next attempt if nobody was handed it first.
package spinlock
