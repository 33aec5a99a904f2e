// Package reentrant provides Mutex, a distributed reentrant lock
// wire-compatible with Redisson's RLock (and, with Options.Fencing, its
// RFencedLock).
//
// The lock is a Redis hash named after the lock whose one field,
// "<client id>:<owner>", counts the owner's holds; the hash's TTL is the
// lease. Releasing the last hold deletes the hash and publishes "0" on
// "redisson_lock__channel:{<name>}", which wakes one waiter per client.
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
// returned context's deadline is the lease's end. A fencing token
// (Options.Fencing, Mutex.Token) increases with every acquire, so a
// storage system that rejects writes carrying a token lower than one it
// has seen is safe from a holder that lost its lease without noticing.
//
// Waiters are not served in arrival order: whoever retries first after a
// release wins, and a releaser may take the lock straight back.
package reentrant
