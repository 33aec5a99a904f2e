// Package semaphore provides Semaphore, a distributed counting semaphore
// wire-compatible with Redisson's RSemaphore.
//
// The semaphore is a Redis STRING named after it that holds the number of
// permits available; an absent key means 0. Acquire takes n permits at
// once when at least n are available (GET, then DECRBY); Release adds n
// (INCRBY, creating the key if needed) and publishes the new count on
// "redisson_sc:{<name>}" ("redisson_sc:<name>" when the name carries its
// own hash tag). A client that hears count c wakes those of its waiters
// whose wants c covers together, the least recently woken first (a
// waiter for n permits counts n, and one that wants more than is left is
// passed over), so a count of 0 wakes nobody. TrySetPermits sets the count
// only when there is none (optionally with a TTL, Options.TTL) and
// publishes it; AddPermits changes it by a delta and publishes the
// result; DrainPermits sets it to 0 and publishes nothing. Redisson's
// clients and relock's read and write the same key and channel, and wake
// each other.
//
// Waiting costs Redis nothing: a waiter listens on the channel through
// its client's shared subscription (internal/wait's loop, which
// subscribes before the attempt that counts, so no release is missed),
// and tries again only when a release or an added count wakes it, when
// its client's subscription connection comes back after a failure, when
// its TryAcquire bound runs out, or, while Redis is unreachable, with
// backoff. A wait ends with an error matching
// relock.ErrNotAcquired and ctx.Err() when ctx ends, or relock.ErrClosed
// when the client closes, and leaves nothing in Redis.
//
// What the semaphore does not promise, as in Redisson:
//
//   - It is not fair. Waiters are not served in arrival order: a
//     newcomer's first attempt may take permits a long waiter was woken
//     for, and a waiter wanting many permits may wait while smaller
//     requests keep taking them.
//   - Permits are not owned. Nothing records who took them, so a holder
//     that crashes never gives its permits back and the semaphore has
//     fewer from then on, and Release does not check that the caller
//     acquired what it returns. Package permits (Redisson's
//     RPermitExpirableSemaphore) gives each permit an id and a lease
//     instead, so that a dead holder's permits come back.
//   - A wake-up is a count, not a grant. The permits a count woke a
//     waiter for may go first to another client's waiter (every client
//     hears the count) or to a newcomer; the waiter then sleeps until
//     the next release or added count.
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
