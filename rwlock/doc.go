// Package rwlock provides RWMutex, a distributed read/write lock
// wire-compatible with Redisson's RReadWriteLock: many readers or one
// writer, each side reentrant through the context.
//
// # Guarantees
//
//   - Readers/writer exclusion, among relock and Redisson clients alike:
//     many readers or one writer, but only while the leases hold.
//     Leases, the watchdog and the lock contexts behave as for
//     reentrant.Mutex, on each side separately: a side's context is
//     cancelled with cause relock.ErrLockLost when its lease is lost.
//   - Reentrancy on each side, through the context; a writer may also
//     read (downgrade), a reader may not write: see "Downgrade, no
//     upgrade".
//   - No arrival order: woken waiters try again, and whoever acquires
//     first wins; nor is there writer preference (see "No writer
//     preference").
//   - ctx bounds the wait: when it ends first, a Lock or RLock returns an
//     error matching relock.ErrNotAcquired and ctx.Err(). The returned
//     context is a child of ctx; its end does not release the hold.
//
// # Redis layout
//
// The lock is one Redis hash named after the lock. Its field "mode" is
// "read" or "write"; each reader's field "<client id>:<owner>" counts its
// read holds, and the writer's field "<client id>:<owner>:write" its
// write holds. Every read hold also has a key of its own,
// "{<name>}:<client id>:<owner>:rwlock_timeout:<i>", with its own lease,
// so a reader that dies stops counting when its own leases end, whatever
// the other readers do, and its field, every key of it gone, is dropped
// by the next read acquire, renewal or unlock that draws it (8 fields
// drawn a call). Releases are announced on
// "redisson_rwlock:{<name>}": "0" when the last reader leaves (one
// waiter per client retries), "1" when a writer leaves (every waiter
// retries, so waiting readers all get in together).
//
// # Downgrade, no upgrade
//
// A writer may take read holds (downgrade): when it then releases its
// write holds, the lock stays in read mode with its read holds. Take them
// with a context that carries the owner but does not derive from the
// write hold's context (the one the write Lock was given, say): a context
// derived from the write hold's is cancelled when the write hold ends. A reader
// asking for the write lock would wait for itself forever (Redisson's
// does); Lock returns an error matching relock.ErrUpgrade at once instead.
//
// # No writer preference
//
// Readers enter whenever the lock is in read mode, even while a writer
// waits, as in Redisson. A steady stream of overlapping readers can keep
// a writer waiting indefinitely; use a fair.Mutex where that matters.
package rwlock
