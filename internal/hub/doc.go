// Package hub shares one Redis subscription connection among many
// waiters: it is package pubsub's implementation, with the wake policies
// of relock's own protocol, which only relock's packages use. Any number
// of goroutines can wait for messages on any number of channels through
// one Hub: it sends one SUBSCRIBE per channel, not one per waiter, over
// one connection (one per master in sharded mode), keeps it through
// reconnects and failovers, and wakes the waiters when a message comes.
// A relock client makes a Hub for its go-redis client with New
// (internal/core); a waiter Subscribes to a channel, stating how the
// channel's messages wake its waiters (a Wake), waits on its C, and
// Closes it when done; a listener Listens instead to be told every
// message. Package pubsub exports a Hub whose channels all take WakeAll.
//
// A Hub opens its connection on the first Subscribe and keeps it for its
// life; channels are reference-counted, so the thousandth waiter on a
// channel costs no Redis command, and the last one to leave unsubscribes.
// In sharded mode (Redis Cluster with SSUBSCRIBE) a hub keeps one connection
// per master node, since a sharded subscription must live on the node that
// owns the channel's slot. When a slot moves (the server drops the
// subscription) or a master stops answering (a failover may be under way),
// the hub asks the cluster layout for the channel's owner and moves the
// channel there, waking its waiters.
//
// Each subscriber states how the channel's messages wake its waiters, a
// Wake; the channel's first subscriber fixes it. A lock's channel
// (WakeOne) follows Redisson's convention: "0" wakes one local waiter on
// the channel (the one that has waited longest since it was last woken),
// any other payload wakes them all. Wake-ups are buffered one deep and
// never block the hub. A waiter that leaves holding an unconsumed wake-up
// passes it on, so a wake-one is not lost to a waiter that gave up.
// relock adds one form of its own, on channels only relock clients
// listen on: a payload "<tag>:<note>" (any payload with a colon) hands
// the note to the waiter that joined first with that tag (Join; a fair
// lock's direct grant) and wakes the others with it, if any (calls of
// the same owner), to try; it wakes nobody when no waiter has the tag.
//
// Synchronizers' channels follow their own conventions. On a
// semaphore's (WakeCount), a count of available permits wakes that many
// waiters (any other payload all of them); on a count-down latch's
// (WakeAll), every message wakes every waiter and is its note, and Wakes
// stamps each such wake-up, so that a client's waiters can share what
// one read told them. A relock client's own channel for a semaphore's
// waiters (WakeTagged) carries tagged messages and echo marks: "=<count>"
// says that the message right after it on the connection, if it is that
// count on the semaphore's shared channel, was published by a relock
// script that woke relock's waiters itself, and the hub wakes nobody for
// either.
//
// Listen is the other way to use a channel: a listener is told the
// payload of every message, none merged or dropped (a relock client's
// own channel, where each message is a notice for it), and stays until
// the hub closes. Listen returns without waiting for the server.
//
// With SetLinger, a channel stays subscribed for a while after its last
// waiter leaves, so a lock contended again soon costs no SUBSCRIBE,
// confirmation PING or UNSUBSCRIBE, and a waiter can join such a live
// channel (Live) before its first attempt instead of after it.
//
// Messages published while a connection is down are lost, so when a
// connection fails the hub wakes every waiter on it, reconnects with
// backoff, resubscribes, and wakes them all again once the server answers.
// A sharded connection's waiters are woken only once their channel is
// subscribed again, on their master or its replacement: while the master
// is silent, an acquire sent to it would only wait out a read timeout. A
// waiter must therefore treat a wake-up as "look again", never as proof
// that something happened.
//
// Each connection has a writer goroutine that sends its subscription
// changes in the order the hub decided them, outside the hub's lock: a
// connection slow to come back (a server frozen or failing over) delays
// only the waiters of its own new channels, never deliveries, other
// connections or waiters leaving.
//
// Errors and panics say "pubsub:", the public package's name: pubsub
// passes them on as its own.
package hub
