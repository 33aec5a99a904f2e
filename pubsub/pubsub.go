package pubsub

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/transport"
)

// ErrClosed is returned by Subscribe and Listen after Close.
var ErrClosed = relock.ErrClosed

// A Mode selects how a Hub subscribes. Its values mean what relock's
// PubSubGlobal and PubSubSharded do; relock's PubSubAuto, which asks the
// cluster, has no Mode: a Hub never waits for Redis before the first
// Subscribe.
type Mode int

const (
	// Global subscribes with SUBSCRIBE on one connection of the client's:
	// the default.
	Global Mode = iota
	// Sharded subscribes with SSUBSCRIBE (Redis Cluster's sharded
	// pub/sub) on the master that owns each channel's slot; it needs a
	// *redis.ClusterClient. A message published with PUBLISH never
	// reaches a Sharded hub, nor one sent with SPUBLISH a Global hub.
	Sharded
)

// Options configure a Hub. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Mode is Global (the default) or Sharded.
	Mode Mode
	// Logger, if not nil, is told when a connection fails and the hub
	// reconnects. Default none.
	Logger *slog.Logger
}

// A Hub shares subscription connections among the goroutines that wait
// on or listen to its channels. Make one with New and Close it when
// done; its methods may be called from any goroutine.
// A nil *Hub's Subscribe, Listen and Close return an error matching
// relock.ErrInvalidArgument; its Done channel is closed.
type Hub struct {
	// h takes hub.WakeAll for every channel: a user's payloads mean
	// nothing to the hub (relock's Clients, whose payloads do, have
	// hubs of their own).
	h *hub.Hub
}

// errNil is the error of every operation of a nil *Hub.
var errNil = core.NilReceiver("pubsub", "Hub")

// closed is the Done channel of a nil *Hub.
var closed = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// New returns a hub for rdb, which it does not close. It connects on the
// first Subscribe or Listen. Its error, matching relock.ErrInvalidArgument,
// reports bad options only: a nil rdb, an unknown Mode, or Sharded with
// rdb not a *redis.ClusterClient.
func New(rdb redis.UniversalClient, opts *Options) (*Hub, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	_, cluster := rdb.(*redis.ClusterClient)
	switch {
	case transport.IsNil(rdb):
		return nil, fmt.Errorf("pubsub: nil redis client: %w", relock.ErrInvalidArgument)
	case o.Mode != Global && o.Mode != Sharded:
		return nil, fmt.Errorf("pubsub: unknown Mode %d: %w", o.Mode, relock.ErrInvalidArgument)
	case o.Mode == Sharded && !cluster:
		return nil, fmt.Errorf("pubsub: Sharded needs a *redis.ClusterClient: %w", relock.ErrInvalidArgument)
	}
	return &Hub{h: hub.New(rdb, o.Mode == Sharded, o.Logger)}, nil
}

// Subscribe adds a waiter on channel and returns once the server has
// the subscription, so that every message published after Subscribe
// returns wakes the waiter, unless its connection fails first (see the
// package's doc). It fails when ctx ends, when the hub is closed
// (ErrClosed), or in Sharded mode when the master of channel's slot
// cannot be found; if the connection breaks meanwhile, Subscribe returns
// and the reconnect wakes the waiter. Close the Subscription when done.
func (h *Hub) Subscribe(ctx context.Context, channel string) (*Subscription, error) {
	if h == nil {
		return nil, errNil
	}
	s, err := h.h.Subscribe(ctx, channel, hub.WakeAll)
	if err != nil {
		return nil, err
	}
	return &Subscription{s: s}, nil
}

// Listen has f called with the payload of every message published on
// channel from the time Listen returns until the hub closes, none merged
// or dropped but those published while the channel's connection is
// down. It returns and fails as Subscribe does. A listener cannot be
// removed: it keeps its channel subscribed for the hub's life.
//
// f is called on the goroutine that reads the channel's connection, one
// message at a time, in the order the server sent them, with no lock
// held. It must not block: every channel of the connection waits for it.
// So it must not call Subscribe or Listen either, which wait for that
// goroutine to read the server's reply.
func (h *Hub) Listen(ctx context.Context, channel string, f func(payload string)) error {
	if h == nil {
		return errNil
	}
	// hub.Hub.Listen does not wait for the server: a waiter held until
	// the listener is in place does, and keeps the channel subscribed
	// meanwhile.
	s, err := h.h.Subscribe(ctx, channel, hub.WakeAll)
	if err != nil {
		return err
	}
	defer s.Close()
	return h.h.Listen(ctx, channel, hub.WakeAll, f)
}

// Done returns a channel that is closed when the hub is closed. A waiter
// selects on it beside its Subscription's C, which is never closed.
func (h *Hub) Done() <-chan struct{} {
	if h == nil {
		return closed
	}
	return h.h.Done()
}

// Close closes the hub's connections and waits for its goroutines. Done
// is closed, and Subscribe and Listen return ErrClosed from then on;
// closing the Subscriptions after it is harmless. Close is idempotent:
// only the first call returns the error of closing the connections.
func (h *Hub) Close() error {
	if h == nil {
		return errNil
	}
	return h.h.Close()
}

// A Subscription is one waiter on a channel, from Subscribe. Its methods
// may be called from any goroutine.
// A nil *Subscription's C is nil and its Close does nothing.
type Subscription struct {
	s *hub.Subscription
}

// C returns the waiter's wake-up channel. A value on it means "look
// again": a message came on the channel, or the connection came back
// after a failure, which may have lost messages. It holds at most one
// wake-up. It is never closed: select on the hub's Done beside it.
func (s *Subscription) C() <-chan struct{} {
	if s == nil {
		return nil
	}
	return s.s.C()
}

// Close removes the waiter. The last waiter on a channel that has no
// listener unsubscribes it. Close is idempotent.
func (s *Subscription) Close() {
	if s == nil {
		return
	}
	s.s.Close()
}
