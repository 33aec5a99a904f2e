// Package core holds what the root package and the lock packages share
// without exporting it to users: the client's guts, owners in contexts,
// local hold records, name validation and the sentinel errors. What a
// client sends to Redis, and how, is package transport's (Client.T). Where it
// sits among relock's layers, and the path of a Lock and an Unlock
// through them: docs/architecture.md.
//
// # The parts of a Client
//
// A Client is set up whole by NewClient: no field of it is assigned
// after NewClient returns. What it has that changes lives in parts, each
// the one owner of its state, each guarded by a mutex of its own:
//
//   - holdTable (hold.go): the locks the client's owners hold, which
//     the watchdog renews; leak.go tracks the contexts they returned.
//   - background (background.go): the goroutines the client owns for
//     work that outlives a call (Background, Detach, Outlive), and the
//     clean-ups under way for each hold (AwaitPending).
//   - lifecycle (life.go): closed, the operations under way (Begin),
//     and relock's own copies of the caller's client, closed once by
//     Shutdown.
//   - pubsubMode (pubsub.go): the pub/sub hub and the publish
//     command, decided at construction or by asking the cluster in the
//     background (probe.go); operations wait for it under their own
//     context (Check, Begin).
//   - T, the transport (package transport), with state of its own: a
//     Pipe's queues, the masters' reports of their replicas, the
//     masters told of for eviction.
//
// The rest of a Client is read-only: its ID, connections, watchdog
// timeout, logger and Observer.
//
// # Lock order
//
// The one statement of the order, from the code; comments elsewhere
// refer here. Locks are taken in this order, outermost first; a
// goroutine holding one may take only those after it:
//
//  1. redlock.RedLock.mu, multilock.MultiLock.mu, election.Election.lmu:
//     they guard their own hold maps (an election's, its leadership),
//     are never held across a call into core, and are taken under no
//     lock of core's;
//  2. lifecycle.ops, read-held by an operation for its whole run
//     (Begin), write-held by Shutdown alone;
//  3. pubsubMode.mu, then background.mu (a probe starts under the
//     first);
//  4. holdTable.mu, then an owner's tracker.mu (leak.go), then
//     renew.Watchdog.mu (granted starts a lease under holdTable.mu);
//  5. package transport's locks, all leaves (its package doc):
//     syncs.mu, evictions.mu and a Pipe's batcher.mu. Of core's, only
//     lifecycle.ops's read hold (an operation's run) may be held when one
//     is taken, and transport holds none of its own when it calls core
//     back (Background, which takes background.mu);
//  6. lifecycle.hooksMu, a leaf, which a lock package may take under its
//     own locks (AtClose).
//
// The chains 3 and 4 never nest in each other: nothing takes a lock of
// one while it holds a lock of the other.
//
// hub.Hub's mutex is taken under none of core's (a hub is made under
// pubsubMode.mu, which takes none of its locks), and the hub calls core
// back (a notice, notice.go) after releasing its own. The watchdog
// likewise calls core back (a lost lease, a round's report) with no lock
// held. Every callback into core from another package or the runtime
// (hold.LeaseLost, notice, watchdogRound, handleGone, a fixed lease's
// expiry) runs with no lock held, and so does every call out of core to
// an Observer. A function whose name ends in Locked must be called with
// the lock its comment names held.
package core
