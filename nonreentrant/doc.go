// Package nonreentrant provides Mutex and FairMutex, distributed locks
// that their owner cannot take twice, wire-compatible with Redisson's
// RedissonNonReentrantLock (the counterpart of Curator's
// InterProcessSemaphoreMutex) and RedissonNonReentrantFairLock.
//
// # Guarantees
//
// Both lock types promise the following, but for the order of waiters,
// which only FairMutex keeps.
//
//   - Mutual exclusion, among relock and Redisson clients alike, but only
//     while the lease holds. The lease, the watchdog and the lock context
//     behave as for reentrant.Mutex: the context Lock returned is
//     cancelled with cause relock.ErrLockLost when the lease is lost, or
//     within milliseconds of a ForceUnlock on any relock client
//     (Mutex.ForceUnlock), and a fixed lease (Options.Lease) is its
//     deadline.
//   - No reentrancy: a Lock or TryLock by an owner that holds the lock
//     already (the context Lock returned, or any context derived from it,
//     in any goroutine) fails at once with an error matching
//     relock.ErrNotReentrant: it never waits for itself and never takes a
//     second hold. Work that must wait for the lock instead takes a fresh
//     owner (relock.WithNewOwner).
//   - Mutex keeps no arrival order; among relock clients alone the lock
//     goes to the longest-registered waiter, as for package reentrant.
//   - FairMutex grants the lock in arrival order, whoever waits, relock
//     or Redisson, exactly as package fair's Mutex does (its doc's
//     "Fairness" and "Waiters that stop waiting" hold word for word): a
//     holder that unlocks and locks again at once queues behind the
//     waiters, and an owner refused for holding the lock never joins the
//     queue.
//   - ctx bounds the wait: when it ends first, Lock returns an error
//     matching relock.ErrNotAcquired and ctx.Err(), and leaves nothing in
//     Redis. The returned context is a child of ctx; its end does not
//     release the lock, Unlock does.
//
// # Redis layout
//
// Mutex's lock is the same Redis hash as Redisson's RLock (and package
// reentrant's Mutex): named after the lock, one field
// "<client id>:<owner>", the hash's TTL as the lease; here the field's
// hold count is always 1. Releasing it deletes the hash and publishes
// "0" on "redisson_lock__channel:{<name>}", as an RLock's last release
// does, and relock's own waiters register and are woken (or handed the
// lock) as package reentrant describes. So non-reentrant and reentrant
// locks of the same name, in relock or in Redisson, exclude each other
// and wake each other's waiters.
//
// Redisson's acquires refuse an owner that holds the lock already with
// the error reply NON_REENTRANT_REACQUIRE, which relock's acquire scripts
// reply too when the owner's field is in the hash but its client has no
// record of the hold.
//
// FairMutex keeps the records of package fair's Mutex, Redisson's
// RFairLock, which RedissonNonReentrantFairLock shares: the same hash,
// the queue "redisson_lock_queue:{<name>}" and deadlines
// "redisson_lock_timeout:{<name>}", and each Redisson waiter woken with
// "0" on its own channel "redisson_lock__channel:{<name>}:<field>"
// (relock's waiters listen on their client's,
// "redisson_lock__channel:{<name>}:<client id>", where a release hands
// them the lock). Only its acquire differs: it refuses the holder with
// NON_REENTRANT_REACQUIRE. So a FairMutex and a fair.Mutex
// of the same name, or Redisson's two fair locks, share one queue and
// exclude each other.
package nonreentrant
