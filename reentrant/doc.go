// Package reentrant provides Mutex, a distributed reentrant lock
// wire-compatible with Redisson's RLock (and, with Options.Fencing, its
// RFencedLock).
//
// # Guarantees
//
//   - Mutual exclusion, among relock and Redisson clients alike, but only
//     while the lease holds. A holder whose lease is lost is told
//     through the context Lock returned (see "Losing the lock" below).
//   - Reentrancy follows the context: Lock returns a context carrying the
//     owner, and a Lock with that context (in the same goroutine or any
//     goroutine it hands the context to) re-enters instead of waiting.
//     Every Lock needs its own Unlock.
//   - No arrival order: among relock clients alone the lock goes to the
//     longest-registered waiter; with Redisson clients waiting too,
//     whoever acquires first after a release wins. Package fair serves
//     its queue in order whoever waits.
//   - ctx bounds the wait: a Lock whose ctx ends first returns an error
//     matching relock.ErrNotAcquired and ctx.Err(), and leaves nothing in
//     Redis. The returned context is a child of ctx; its end does not
//     release the lock, Unlock does.
//
// # Losing the lock
//
// Without a fixed lease the client's watchdog renews the lease while the
// lock is held, and the context Lock returned is cancelled with cause
// relock.ErrLockLost when a renewal finds the lock gone or cannot reach
// Redis before the lease may have expired. With a fixed lease
// (Options.Lease) nothing renews it, and the returned context's deadline
// is the lease's end. Either way a ForceUnlock on any relock client
// cancels it within milliseconds (Mutex.ForceUnlock). A fencing token
// (Options.Fencing, Mutex.Token) increases with every acquire, so a
// storage system that rejects writes carrying a token lower than one it
// has seen is safe from a holder that lost its lease without noticing.
//
// # Redis layout
//
// The lock is a Redis hash named after the lock whose one field,
// "<client id>:<owner>", counts the owner's holds; the hash's TTL is the
// lease. Releasing the last hold deletes the hash and publishes "0" on
// "redisson_lock__channel:{<name>}", which wakes one Redisson waiter per
// Redisson client.
//
// relock's own waiters register in a sorted set,
// "relock_lock_waiters:{<name>}" (member: owner field; score: when it
// first found the lock taken), and listen on their client's channel,
// "redisson_lock__channel:{<name>}:<client id>". A release tells the
// longest-registered one alone, rather than one waiter per client. When
// nobody listens on the lock's channel (no Redisson waiter, which must get
// its chance, is there), the release grants the lock to that waiter in
// the same script, as the fair lock's release does, and its wake-up means
// "you hold it": no further script, and no releaser barging back in.
// Otherwise it wakes that waiter to try ("<owner>:0"), alongside the
// "0" for Redisson's waiters. A waiter that wants a fencing token is
// only ever woken (a grant would draw no token). A waiter leaves the
// registry when it acquires or gives up; one whose client no longer
// listens (the process died) is dropped by the release, which tells the
// next. A waiter that finds a Redisson client holding the lock also
// listens on the lock's channel, where that client's release publishes
// "0" (which wakes one waiter per relock client, as among Redisson
// clients). The registry expires a few seconds after the lock's lease
// could, so nothing is left behind. A granted waiter's lease bound rests,
// as in package fair, on its last attempt that found the lock taken.
//
// Calls of one owner may run at once: when a grant to one of them meets
// another's re-entry, the first call to record the granted hold takes it
// as it is and the other re-enters it, so Redis counts the owner's holds
// as the client does, one for each Lock that returned.
package reentrant
