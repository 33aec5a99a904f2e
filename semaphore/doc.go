// Package semaphore provides Semaphore, a distributed counting semaphore
// wire-compatible with Redisson's RSemaphore.
//
// What it guarantees:
//
//   - Acquire(ctx, n) takes n permits at once, and only when at least n
//     are available, atomically among relock and Redisson clients.
//   - relock's waiters are served in turn: the longest waiting first, of
//     those whose wants fit in the free permits.
//   - ctx bounds the wait: when it ends first, Acquire returns an error
//     matching relock.ErrNotAcquired and ctx.Err() and takes nothing; it
//     returns relock.ErrClosed when the client closes.
//   - Permits carry no lease and no context: nothing records a held
//     permit, so nothing renews, expires or cancels it, and Acquire is
//     not reentrant (each call takes permits of its own).
//
// Its limits are listed under "What the semaphore does not promise"
// below: it is fair only among relock's waiters, permits are not owned,
// and a grant not acknowledged within ten seconds is revoked.
//
// The semaphore is a Redis STRING named after it that holds the number of
// permits available; an absent key means 0. Acquire reads it and takes
// its permits in one script (GET, then DECRBY); Release adds n
// (INCRBY, creating the key if needed) and publishes the new count on
// "redisson_sc:{<name>}" ("redisson_sc:<name>" when the name carries its
// own hash tag), where Redisson's waiters listen. TrySetPermits sets the
// count only when there is none (optionally with a TTL, Options.TTL) and
// publishes it; AddPermits changes it by a delta and publishes the
// result; DrainPermits sets it to 0 and publishes nothing. Redisson's
// clients and relock's read and write the same key and channel, and wake
// each other.
//
// A relock waiter that finds too few
// permits registers in a ZSET, "relock_semaphore_waiters:{<name>}"
// (member "<client id>:<tag>:<permits wanted>", score when it first
// waited, in server microseconds), and listens on its client's own
// channel, "relock_sc:{<name>}:<client id>". Whatever adds permits walks
// the registry from its head and hands the waiters whose wants fit in
// the permits together their permits, passing over one that wants more
// than is left: it takes them from the count, moves the waiter's member
// to "relock_semaphore_grants:{<name>}" (a ZSET scored by the grant's
// time) and tells it "<tag>:g" on its client's channel, and the waiter's
// Acquire returns without another call to Redis. So a release of k
// permits serves at most the waiters k can satisfy, on whichever clients
// they wait, the longest waiting first, and costs them nothing more; a
// waiter passed over takes its turn once enough are free, and several
// waiters of one client, wanting different counts, are each served when
// their turn comes. Only a waiter whose client still listens is served
// (a PUBLISH reaches it); others are dropped from the registry.
//
// A grant is acknowledged by the waiter's client, with its next acquire
// or release on the semaphore or within a quarter of a second on its
// own, and the record goes. A waiter that missed the message (it gave up
// just then, or its connection dropped it) finds the record: its next
// attempt takes the permits, its give-up returns them. A grant not
// acknowledged within ten seconds is revoked and its permits returned to
// the count by the next script that looks, since the waiter's process
// may be gone while Redis still counts its connection as listening (a
// machine that crashed, a partition). If that holder was only cut off
// and acknowledges later, the permits are taken back from the count: in
// between, more may hold permits than the semaphore has, as two may hold
// a lock whose holder was cut off from Redis past its lease.
//
// Redisson's releases publish on the shared channel only. One relock
// waiter, the watcher (named by "relock_semaphore_watcher:{<name>}"),
// also listens there, and Redisson's message wakes it: its attempt walks
// the registry as a release would. A relock script that publishes there
// first tells the watcher's client, on its own channel, "=<count>", and
// the client's hub then wakes nobody for the count that follows: the
// script served whom it had to. When the watcher leaves, the most
// recently registered waiter takes the role over ("<tag>:w"). relock's
// scripts publish the count after their grants, and nothing when the
// grants took every permit: Redisson's waiters take what relock's leave.
//
// Waiting costs Redis nothing: a waiter sends no command until it is
// served or woken, except that a registered waiter tries again every 30
// seconds (which renews the registry's TTL), or sooner when a grant
// would be revoked before then; it also tries
// when its client's subscription connection comes back after a failure,
// when its TryAcquire bound runs out, or, while Redis is unreachable,
// with backoff. A wait ends with an error matching relock.ErrNotAcquired
// and ctx.Err() when ctx ends, or relock.ErrClosed when the client
// closes; the waiter leaves the registry, returning permits handed to it
// and passing on the watcher's role. The registry's entries of a process
// that died are dropped as the walks meet them (its client's channel has
// no subscriber), and the registry and the watcher's key, which carry
// TTLs, vanish with the last waiter; the grants' ZSET, with the last
// grant acknowledged or revoked.
//
// What the semaphore does not promise, as in Redisson:
//
//   - It is fair only among relock's waiters. Redisson's clients do not
//     look at the registry, and relock's releases serve relock's
//     waiters first: Redisson's waiters take what those leave, and are
//     woken by every count published, as Redisson wakes them. A
//     waiter wanting many permits is passed over while smaller requests
//     behind it fit in what is free, and may wait while they keep taking
//     them.
//   - Permits are not owned. Nothing records who took them, so a holder
//     that crashes never gives its permits back and the semaphore has
//     fewer from then on, and Release does not check that the caller
//     acquired what it returns. Package permits (Redisson's
//     RPermitExpirableSemaphore) gives each permit an id and a lease
//     instead, so that a dead holder's permits come back.
//   - A grant holds while it is acknowledged: a holder cut off from
//     Redis for ten seconds right after being served may find its
//     permits given to another meanwhile (see above).
//
// Release, AddPermits, TrySetPermits and DrainPermits are never sent
// again once they may have run: when a reply is lost to a connection
// failure the call returns the error, and the change may or may not have
// been made. A waiting acquire whose attempt's reply is lost tries again
// (the wait goes on), so permits the lost attempt took, if any, are
// never returned.
//
// With replica sync (relock.Options.SyncReplicas, on by default) an
// acquire waits for the master's replicas as lock acquires do, and gives
// back permits they did not confirm.
//
// Counts (permits set, added, acquired or released) are at most
// relock.MaxCount (2^53) in magnitude, the integers Redis's Lua numbers
// hold exactly; a larger one is an error matching
// relock.ErrInvalidArgument, sent nowhere, never rounded. The available
// count itself may grow past MaxCount, by releases and additions, and
// stays exact there: Redis adds in 64 bits, an acquire of at most
// MaxCount permits compares right against any count (it never takes more
// than there is), and the count published and returned is the key's own
// string. A sum beyond 64 bits is refused by Redis: the call returns its
// error and the count does not change.
package semaphore
