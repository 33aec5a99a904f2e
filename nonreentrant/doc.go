// Package nonreentrant provides Mutex, a distributed lock that its owner
// cannot take twice, wire-compatible with Redisson's
// RedissonNonReentrantLock (the counterpart of Curator's
// InterProcessSemaphoreMutex).
//
// # Guarantees
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
//   - No arrival order; among relock clients alone the lock goes to the
//     longest-registered waiter, as for package reentrant. There is no
//     fair variant (Redisson's RedissonNonReentrantFairLock).
//   - ctx bounds the wait: when it ends first, Lock returns an error
//     matching relock.ErrNotAcquired and ctx.Err(), and leaves nothing in
//     Redis. The returned context is a child of ctx; its end does not
//     release the lock, Unlock does.
//
// # Redis layout
//
// The lock is the same Redis hash as Redisson's RLock (and package
// reentrant's Mutex): named after the lock, one field
// "<client id>:<owner>", the hash's TTL as the lease; here the field's
// hold count is always 1. Releasing it deletes the hash and publishes
// "0" on "redisson_lock__channel:{<name>}", as an RLock's last release
// does, and relock's own waiters register and are woken (or handed the
// lock) as package reentrant describes. So non-reentrant and reentrant
// locks of the same name, in relock or in Redisson, exclude each other
// and wake each other's waiters.
//
// Redisson's acquire refuses an owner that holds the lock already with
// the error reply NON_REENTRANT_REACQUIRE, which relock's acquire script
// replies too when the owner's field is in the hash but its client has no
// record of the hold.
package nonreentrant
