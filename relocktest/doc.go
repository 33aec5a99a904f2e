// Package relocktest lets a service's tests check how their code reacts
// when a relock lock misbehaves: lost, slow to renew, never woken, or
// outlived by the server's clock, without a fault harness of their own.
//
// New gives a test a Kit: a *relock.Client (Kit.Client) on an embedded
// Redis (an in-process miniredis), or on the server named by the
// REDIS_ADDR environment variable when it is set, and the controls:
//
//   - ExpireNow makes the leases under a name run out now, as if the
//     holder had stopped renewing; its holders' lock contexts are
//     cancelled with a cause matching relock.ErrLockLost.
//   - FailRenewals and StallRenewals answer the Client's next renewal
//     rounds with an error, or delay them: a Redis that is down or slow
//     for the watchdog only, so that a holder loses its lock by the
//     watchdog's own deadline, or keeps it through a short stall.
//   - DropWakeups loses the next wake-up messages to the Client's
//     waiters: a waiter must then get what it waits for by its fallback
//     (a lock's lease, a bound), which shows that the code under test
//     does not depend on the message.
//   - Advance moves the embedded server's clock: keys' TTLs and TIME.
//
// The controls act on Kit.Client only; NewClient makes further clients on
// the same server, as other processes, that no control disturbs, and
// Redis gives the test a go-redis client of its own to read what is in
// Redis. Everything the Kit starts ends with the test (or Close).
//
// # What the controls do
//
// ExpireNow deletes a lock's record (the hash, and a read/write lock's
// read holds) or moves a permit's expiry into the past, then sends the
// holders' clients relock's force-unlock notice, the message by which
// relock tells a holder that its lock is gone: the holder's watchdog
// renews at once, finds the lock gone and cancels its context. So the
// holder learns by relock's own path, not by a fake, within a round trip,
// and the cause's text names that notice. A client listens for notices
// once it has held a lock or a permit; a RedLock's holder on a client
// that has held neither learns as from a real expiry, at its watchdog's
// next round. Waiters are not woken, as an expiry wakes no one: they retry
// when the lease they last saw ends.
//
// FailRenewals and StallRenewals recognise the watchdog's rounds by
// their scripts' SHA1 (a round is one pipeline of renewals, one per
// held lock or permit), through a go-redis hook on the Client's go-redis
// client; acquires, unlocks and other calls pass untouched. A failed
// round leaves the leases where they were, and the watchdog retries
// soon; once no renewal has succeeded for the lease less the watchdog's
// margin, it cancels the holders with relock.ErrLockLost (wrapping
// watchdog.ErrExpired), before the server could expire the lock. A
// stalled round is sent after the delay, or not at all when the round's
// own timeout ends first.
//
// DropWakeups wraps the Client's connections (a go-redis dial hook) and
// removes the next pub/sub messages on its subscription connection,
// other than its force-unlock notices and the semaphores' echo marks,
// which wake no one. Redis does not lose a message on a live connection:
// a real loss comes with a broken connection, after which relock wakes
// every waiter. A dropped message is the harsher case: nothing tells the
// waiter. A lock's waiter retries when the lease it saw ends (a grant
// made to it in Redis is then taken); a semaphore's or a permit's when
// its bound ends (TryAcquire), or within 30 seconds; a latch's waiter
// sleeps until its bound, where TryAwait's last look reads the count and
// sees the latch open, while Await waits until its context ends.
//
// Advance moves the embedded server's clock forward: keys' TTLs run down
// by d and TIME (which permits read) jumps by d. The clients' clocks do
// not move: a watchdog-renewed lock whose key expires this way is found
// gone at its next renewal, a third of the lease later at most. On a
// server named by REDIS_ADDR, Advance returns ErrNotEmbedded: set
// Options.Embedded for a test that needs it.
//
// # Servers and names
//
// By default the Kit starts an embedded server for each test and stops it
// at the end. With REDIS_ADDR set (host:port, or a redis:// URL), it uses
// that server, shared with whatever else uses it. The Kit never flushes
// it: a test should use names from Kit.Name, which are unique to the Kit,
// and the Kit deletes, when it closes, the keys whose names contain its
// prefix; it touches nothing else. Only a single server is supported: not
// a cluster, nor Sentinel.
//
// The Kit's clients default to a WatchdogTimeout of WatchdogTimeout (2s)
// instead of relock's 30s, so that a lost lease shows within seconds;
// set Options.Client to change it or any other relock.Options.
package relocktest
