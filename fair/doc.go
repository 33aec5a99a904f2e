// Package fair provides Mutex, a distributed reentrant lock that grants
// waiters in arrival order, wire-compatible with Redisson's RFairLock.
//
// # Guarantees
//
//   - Mutual exclusion, among relock and Redisson clients alike, but only
//     while the lease holds. Leases, the watchdog and the lock context
//     behave exactly as for reentrant.Mutex: a holder whose lease is lost
//     has the context Lock returned cancelled with cause
//     relock.ErrLockLost, and a fixed lease is the context's deadline.
//   - Reentrancy follows the context, as for reentrant.Mutex.
//   - Arrival order, whoever waits, relock or Redisson: the lock goes to
//     the queue head (see "Fairness"). A waiter that stops retrying, or a
//     Redisson waiter past its first deadline, is dropped from the queue
//     (see "Waiters that stop waiting").
//   - ctx bounds the wait: when it ends first, Lock returns an error
//     matching relock.ErrNotAcquired and ctx.Err(). The returned context
//     is a child of ctx; its end does not release the lock, Unlock does.
//
// # Redis layout
//
// The lock record is the same hash as Redisson's RLock (see package
// reentrant). Waiters queue in the list "redisson_lock_queue:{<name>}",
// and the sorted set "redisson_lock_timeout:{<name>}" holds, for each, the
// instant after which a silent waiter may be dropped.
//
// # Hand-off
//
// The release hands the lock to the queue head directly when the head is
// a relock waiter: in the same script it takes the head off the queue,
// gives it one hold with a fresh lease, and publishes "<owner>:<lease ms>"
// on the head's client's channel, "redisson_lock__channel:{<name>}:<client
// id>", where all of that client's waiters on the lock listen. The
// waiter's wake-up then means "you hold it": it sends nothing more. Its
// lease bound rests on the send time of its last attempt that found the
// lock taken, which precedes the grant (the grant needs the waiter in
// the queue); when that instant is older than a third of the lease, or
// the grant's lease is not the waiter's, the waiter renews the hold
// before Lock returns and its bound rests on the renewal. A grant costs
// the same however long the queue: the other waiters' deadlines are left
// as they are (Redisson's own acquire moves them all up one wait).
//
// A head whose client no longer listens on its channel (the process
// died) is passed over by the release, which hands the lock to the next
// waiter. A Redisson waiter at the head is not granted (its acquire
// script would count a second hold): the release publishes "0" on its
// own channel, "redisson_lock__channel:{<name>}:<its field>", and it
// takes the lock itself, as between Redisson clients. A relock waiter
// that joins the queue right behind a Redisson holder or waiter also
// listens on its own channel, where that client's release will wake it.
// (If the waiter between them leaves the queue, a Redisson client's
// release may then go unheard, and the waiter takes the lock when its
// own timer fires: at the lock's TTL as it last saw it, or at
// WaitTimeout/2.)
//
// relock tells its owner fields from Redisson's by the client id: relock
// client ids are version-8 UUIDs, Redisson's version 4.
//
// # Fairness
//
// The lock goes to the queue head. A waiter that arrives while others
// wait, or while the lock is held, joins the tail; so does a holder that
// unlocks and locks again at once: it does not barge back in. Re-entry
// (a Lock with a context whose owner holds the lock) never queues.
//
// The queue's order is the order in which waiters joined it. A client's
// first contended Lock on a lock (and the first after the client's
// subscription to it has gone idle; see relock.Options.Linger) joins one
// round trip after its first attempt: it subscribes first, so that no
// grant is published before it listens.
//
// # Waiters that stop waiting
//
// A waiter whose Lock gives up (TryLock's wait ends, or its context ends)
// leaves the queue at once; one that was handed the lock as it gave up
// passes it on. A waiter's deadline starts at the lock's TTL plus
// Options.WaitTimeout per place in the queue. A live waiter retries at least every
// WaitTimeout/2, and each retry moves its deadline to at least its
// position in the queue times WaitTimeout from now, so it keeps its place
// however long it waits (Redisson's waiters are dropped once their first
// deadline passes, alive or not). A relock waiter that dies (its process
// killed) is passed over by the first release that reaches it. One that
// stops retrying while its process lives on (cut off from Redis), and a
// Redisson waiter that dies, are dropped once at the head of the queue
// with their deadline passed: WaitTimeout after the last retry, or the
// initial deadline if that is later. As grants do not move deadlines
// up, a dead Redisson waiter queued at place p is dropped up to p wait
// timeouts later than Redisson's own scripts would drop it. Deadlines are read on the Redis
// server's clock, so clients with skewed clocks cannot drop each other
// early.
package fair
