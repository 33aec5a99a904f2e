// Package latch provides Latch, a distributed count-down latch
// wire-compatible with Redisson's RCountDownLatch: Go and Java services
// can count down and wait on the same latch.
//
// What it guarantees:
//
//   - Await returns once the latch is open (its count reached zero, was
//     deleted, or was never set). A waiter listens before it looks at
//     the count, so no opening after the look is missed (but see Redis
//     Cluster below).
//   - ctx bounds the wait: when it ends first, Await returns an error
//     matching ctx.Err(), and relock.ErrClosed when the client closes; a
//     wait leaves nothing in Redis. TryAwait's running out is false, nil.
//   - An opening just before an Await began may still end it: its
//     message may reach the client after the Await started listening,
//     and the Await then returns for it even when the latch was set
//     again meanwhile (a reusable barrier's next round). Telling such a
//     message from a new one would cost a round trip on the shared
//     subscription for every wait; latch's TestChurn allows 100 ms.
//   - A latch excludes nobody and has no owner: any process may count it
//     down. It has no lease either (see below), and a CountDown that
//     returns an error may or may not have counted: it is never retried.
//
// A latch is a count at the Redis key named after it (a string holding a
// decimal integer). TrySetCount gives an open latch a count; each
// CountDown takes one off, and the one that reaches zero deletes the key
// and announces it. A latch without a count is open: Await on a latch
// that was never set returns at once, as in Redisson, so set the count
// before the waiters look. An open latch may be set again, which makes it
// a reusable barrier. Delete removes the count whatever it is, which
// opens the latch.
//
// Changes are announced on the channel
// "redisson_countdownlatch__channel__{<name>}": "0" when a CountDown took
// the count to zero, "1" when TrySetCount set a count or Delete removed
// one. Redisson's own waiters act on "0" only, and keep waiting after a
// Delete until a count reaches zero.
//
// Waiting costs Redis nothing, and a thousand waiters on a client cost
// what one does. A waiter takes the client's one shared subscription to
// the channel (one per client and latch however many goroutines wait),
// looks at the count once that subscription is in place, and then sleeps
// until a message comes. It never polls. A client's waiters on a latch
// look together: one read of the count answers every waiter that looks
// while it runs, and a read that found the latch closed answers every
// later look until the next message on the channel, since no change goes
// unannounced; but the last look of a TryAwait that runs out reads the
// count itself, since the message of an opening that came before the call
// may still be on its way to the client. A "0" wakes every waiter, which
// returns without a read: the latch opened while it listened. A "1" is a
// new count or a Delete, and wakes every waiter to look again, which
// costs the client one read; so a Delete wakes relock's waiters, which
// then return. When the subscription's connection breaks, the client
// reads the count again once it is back, since messages sent during the
// gap are lost.
//
// A latch has no lease: nothing renews its count. A process that dies
// before its CountDown leaves the count where it was, and the latch's
// waiters waiting, until someone else counts down or deletes the latch,
// or, with Options.TTL, until the count expires. An expiry opens the
// latch without a message: a waiter finds it open at its next look (after
// the next message, a reconnect, or at a TryAwait's end), so wait with
// TryAwait, or a deadline, on a latch that may expire. Writes are not synchronised with replicas: a failover
// may lose a count change the old master had not yet replicated, as with
// Redisson.
//
// On Redis Cluster the channel wraps the whole name in braces, so for a
// name with a hash tag of its own ("jobs:{42}") the channel hashes to
// another slot than the count, and no script can both change the count
// and publish there (Redisson's own latch fails with CROSSSLOT on such a
// name). relock then changes the count in one script and publishes the
// message in a second command, routed to the channel's slot: a process
// that dies between the two leaves the waiters asleep until the next
// message. Names without a hash tag keep both in one slot, and one
// script does both, as on a single server.
//
// A count is at most relock.MaxCount (2^53), the integers Redis's Lua
// numbers hold exactly; a larger one is an error matching
// relock.ErrInvalidArgument.
package latch
