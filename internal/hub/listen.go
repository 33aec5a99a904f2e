package hub

import (
	"context"
	"slices"
)

// Listen has f told the payload of every message published on channel
// from the time the server has the subscription until the hub closes.
// It is for a channel of the listener's own, on which every message
// matters (a client's channel for notices), where waiters' channels
// carry wake-ups that may be merged or handed to one waiter: each
// message is told to every listener of the channel, none is dropped or
// merged, and the channel's waiters, if any, are woken as its Wake says.
// wake is stated as Subscribe states it: the channel's first subscriber,
// waiter or listener, fixes it.
//
// Listen does not wait for the server: it queues the subscription and
// returns, so that a caller that must not wait (an acquire) can start
// listening. Messages published before the server has the subscription
// are missed, as are those published while its connection is down (the
// hub resubscribes after a reconnect, as it does for waiters). In
// sharded mode Listen first finds the master of channel's slot in the
// cluster layout the go-redis client holds, loading it first if it has
// none (until ctx ends). It fails only when ctx ends then or the hub is
// closed. A listener stays until the hub closes.
//
// f is called on the goroutine that reads the channel's connection, one
// message at a time, in the order the server sent them, with no lock
// held. It must not block: every channel of the connection waits for it.
func (h *Hub) Listen(ctx context.Context, channel string, wake Wake, f func(payload string)) error {
	wake.check()
	if err := ctx.Err(); err != nil {
		return err
	}
	var l *link
	if h.sharded {
		var err error
		if l, err = h.shardLink(ctx, channel); err != nil {
			return err
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	ch := h.channelLocked(l, channel, wake)
	if ch.wake != wake {
		panic(mismatch(ch, wake))
	}
	h.reuseLocked(ch)
	// A new slice, not an append in place: a delivery may be calling
	// the old one's listeners.
	ch.listeners = append(slices.Clip(ch.listeners), f)
	return nil
}
