// Package redlock provides RedLock, a lock held by a majority of
// independent Redis masters (the Redlock algorithm), each holding an
// ordinary Redisson RLock record.
//
// # Guarantees
//
//   - Mutual exclusion by majority: the lock is held only while a quorum
//     (N/2+1) of the masters hold its record (see "Algorithm"), under the
//     assumptions set out in "What RedLock does not guarantee" below.
//   - Reentrancy follows the context as for every relock lock.
//   - No arrival order: a failed attempt waits a random delay and tries
//     again.
//   - Without a fixed lease, each master's record is renewed by its
//     client's watchdog; the context Lock returned is cancelled with cause
//     relock.ErrLockLost as soon as fewer than a quorum of masters can
//     still be holding it (records found gone, or masters unreachable for
//     so long that their records may have expired). With a fixed lease,
//     the context's deadline is the end of the validity.
//   - ctx bounds the wait: when it ends first, Lock returns an error
//     matching relock.ErrNotAcquired and ctx.Err() (see "Algorithm").
//
// # Algorithm
//
// Lock sends the acquire to every master at once, each call cut off after
// Options.NodeTimeout, and succeeds when a quorum (N/2+1) said yes while
// the lease still has validity left: lease - elapsed - drift, where drift
// is lease * DriftFactor + 2ms. Otherwise it releases on every master,
// including those that did not answer in time (their acquire may have
// landed), waits a random delay and tries again until ctx ends or
// TryLock's wait runs out. Unlock releases on every master.
//
// Every call to a master, the acquire, the release of a failed attempt
// and Unlock's, goes through the client relock runs acquires through
// (no retries, deadlines honoured) and is cut off after NodeTimeout, so
// a dead or frozen master costs an operation NodeTimeout: a refused
// TryLock(0), an attempt and its release, at most twice that. A Lock
// whose ctx ends cuts its attempt in flight short (a re-entry's runs to
// NodeTimeout), releases it and returns.
//
// A release that gets no answer (its reply was lost, or the master took
// longer than NodeTimeout) is sent again in the background until the
// master answers, for up to relock.OpTimeout, each try cut off after
// twice as long as the one before, up to a second (NodeTimeout if that
// is longer). Where the acquire it releases lost its reply too, and may
// still run on the master, the attempt is recorded there as given up
// (relock_lock_gone:{<name>}) before each unlock, so that it changes
// nothing if it runs later; Unlock does the same on a master that did
// not answer the attempt that took the lock. The owner's next attempt
// on a master waits for such a release within its NodeTimeout, or
// leaves that master out.
//
// A Lock waiting between attempts holds nothing and ends as soon as any
// of its clients closes, with an error matching relock.ErrClosed; Close
// waits at most for an attempt in flight and its release, and for the
// try in flight of a release sent again, which it ends. Unlock with a
// closed client releases on the other masters and returns an error
// matching relock.ErrClosed.
//
// # What RedLock does not guarantee
//
// RedLock assumes bounded clock drift and bounded pauses. A master whose
// clock jumps forward expires the record early; a master restarted
// without persistence (or with fsync lagging) forgets it, so a restart of
// a minority is survivable only if it stays down for a lease (Redis
// "delayed restarts"). A process paused (GC, swap, SIGSTOP) after it
// checked its context may act after its lock expired. None of this is
// detectable by the client, and RedLock hands out no fencing token: its
// masters count nothing in common. Where overlapping holders would
// corrupt data, rely on a token rather than on RedLock's timing: take a
// lock on one master (with its replicas, relock's default) with
// reentrant.Options.Fencing, and have the storage reject a token lower
// than one it has seen.
package redlock
