// Package pubsub shares one Redis subscription connection among many
// goroutines. A Hub made with New sends one SUBSCRIBE per channel,
// however many goroutines wait on it, over one connection (one per
// master node in Sharded mode, Redis Cluster's SSUBSCRIBE), and keeps
// the subscriptions through reconnects and failovers. Channels are
// reference-counted: the thousandth waiter on a channel costs no Redis
// command, and the last one to leave unsubscribes it.
//
// A goroutine waiting for something a message announces (a job queued,
// a key set, a lock released) Subscribes to the channel, looks, and if
// what it waits for is not there yet waits on the Subscription's C, then
// looks again. Every message on a channel wakes every waiter on it.
// Wake-ups are buffered one deep and never block the hub, so the
// messages that come before a waiter takes its wake-up wake it once. A
// goroutine that needs every message's payload Listens instead.
//
// Redis keeps no message for a subscriber whose connection is down, so
// when a connection fails the hub wakes every waiter on it, reconnects
// with backoff, resubscribes, and wakes them all again once the server
// answers. In Sharded mode, when a channel's slot moves or its master
// stops answering (a failover may be under way), the hub moves the
// channel to the master that owns it now; its waiters are woken when
// the channel moves or is subscribed again, not at the failure. A
// wake-up therefore means "look again", never proof that a message came,
// and a waiter that must not wait forever also looks again after a
// timeout of its own: a message published while its connection was down
// is lost.
//
// Each connection is read by a goroutine of the hub; Close stops the
// hub's goroutines and waits for them.
//
// As with relock.New, New's error reports bad options only. The errors'
// sentinels are the root package's: ErrClosed is relock.ErrClosed itself,
// so errors.Is matches either name, and bad input (a nil *Hub included)
// matches relock.ErrInvalidArgument.
package pubsub
