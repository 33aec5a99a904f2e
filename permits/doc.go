// Package permits provides Semaphore, a distributed counting semaphore
// whose permits expire unless renewed, wire-compatible with Redisson's
// RPermitExpirableSemaphore: relock and Redisson clients can share one.
//
// What it guarantees:
//
//   - Acquire takes a permit only when one is available, among relock
//     and Redisson clients alike; exclusion among permit holders holds
//     only while their leases hold.
//   - A permit is leased and, by default, renewed by the watchdog; when
//     it is lost, Permit.Context is cancelled with cause
//     relock.ErrLockLost, before another client can be handed it. With a
//     fixed lease (Options.Lease) its deadline is the lease's end. See
//     "What relock adds" below, and "Clocks" for the margins.
//   - ctx bounds the wait: when it ends first, Acquire returns an error
//     matching relock.ErrNotAcquired and ctx.Err() and leaves nothing in
//     Redis, even when one of its acquires runs on the server after it
//     returned (see "Late acquires" below). Permit.Context is a child of
//     ctx. Acquire is not reentrant: each call takes a permit of its own.
//   - relock's waiters are served in turn, as package semaphore's are.
//
// Limits. The semaphore is fair only among relock's waiters: Redisson's
// acquires do not look at the registry, and may take a permit a relock
// waiter was woken for (which then waits in its place again). Permits
// are not owned: Semaphore.Release gives back any permit by its id, and
// a permit released by someone else goes to a waiter at once, while its
// relock holder learns of it only at its next renewal (with a fixed
// lease, not at all until the lease ends).
//
// The semaphore's count of available permits is a STRING at the
// semaphore's name; it must be set up once with TrySetPermits (or
// AddPermits). Each permit held is a member of the ZSET
// "{<name>}:timeout": the permit's id (16 random bytes, shown as 32
// lower-case hex digits by Permit.ID), scored with the epoch millisecond
// at which it expires. Acquire decrements the count and adds a member;
// a release removes the member, increments the count and publishes the
// new count on "redisson_sc:{<name>}", where Redisson's waiters listen.
// Acquires, releases, renewals and AvailablePermits first reclaim the
// permits whose expiry has come: they remove them, add them back to the
// count and publish the count.
//
// relock's waiters wait in package semaphore's registry: a waiter that
// finds no permit registers in "relock_semaphore_waiters:{<name>}" and
// listens on its client's own channel, "relock_sc:{<name>}:<client id>",
// and a release, or permits coming back, wakes there the longest waiting
// ones that the free permits can satisfy, one waiter a permit, on
// whichever client it waits; the permit is reserved for it until it tries
// again. One relock waiter, the watcher, also listens on the shared
// channel, where Redisson's releases are published, and tries again when
// the earliest held permit expires, which frees it without a message: its
// attempt returns the permit to the count and wakes the waiter it is for.
// The others sleep until a wake-up, trying again every 30 seconds (and
// when a permit reserved for another runs out of time), so an expiry
// costs one attempt, not one per waiter. Package semaphore's
// documentation tells the rest: the watcher's echo marks, what happens to
// waiters of a process that died, and that nothing stays behind in Redis.
//
// Late acquires. An acquire whose reply was lost (a deadline cut the
// read, the connection dropped) may still run on the server, after the
// undo that relock sent for it on another connection: Redis orders
// nothing across connections. The undo therefore gives the permit back
// and records its id, in one script, in relock's own ZSET
// "relock_permits_gone:{<name>}" (member: the id's 16 raw bytes, score:
// the epoch millisecond until which the record lasts, the lease an
// acquire sets after the undo; the key expires a lease after the last
// undo), and an acquire whose id is recorded there takes nothing and
// registers nothing. Either order thus
// leaves no permit behind; an acquire that runs later than a lease after
// its undo holds its permit for one lease at most. Redisson never reads
// the record.
//
// What relock adds to Redisson's permits is the lease a lock has.
// Redisson's permits need a lease guessed up front: a holder slower than
// its guess loses its permit silently, and one that crashes keeps it for
// the whole lease (for ever, without a lease). A relock permit's lease
// is, by default, the client's WatchdogTimeout, renewed by the client's
// watchdog every third of it while the permit is held; Permit.Context is
// cancelled with cause relock.ErrLockLost when a renewal finds the permit
// gone, or when no renewal has succeeded for long enough that the server
// may have expired it, a margin before then (relock.Options.LeaseMargin),
// so the holder is told before another client can be handed the permit. A
// holder that dies stops renewing, and its permit comes back when its
// last lease ends. With a fixed lease (Options.Lease) nothing renews the
// permit, and its context's deadline is the lease's end, reckoned from
// the acquire's send time.
//
// Clocks. The scores are epoch milliseconds, Redisson's convention, and
// Redisson's scripts read the Redisson client's clock. relock's scripts
// read the Redis server's clock (TIME) instead, both to set an expiry and
// to reclaim, so relock clients whose clocks disagree cannot reclaim each
// other's permits early: among relock clients a permit expires a full
// lease after the server last set it. A Redisson client whose clock runs
// ahead of the server's by s reclaims permits s early. A watchdog-renewed
// relock holder is told relock.Options.LeaseMargin before the
// server-clock expiry, which absorbs a skew up to about that much; a fixed-lease holder is told at the lease's end
// reckoned from its send time, which absorbs only the acquire's network
// delay. Keep the clocks of Redisson clients that share a semaphore with
// relock in sync with the server's (NTP), well within those margins.
//
// Counts (permits set or added) are at most relock.MaxCount (2^53) in
// magnitude, the integers Redis's Lua numbers hold exactly; a larger one
// is an error matching relock.ErrInvalidArgument, sent nowhere, never
// rounded. The available count itself may grow past MaxCount, by
// additions and permits coming back, and stays exact there: Redis adds
// in 64 bits, and the count published and returned is the key's own
// string.
package permits
