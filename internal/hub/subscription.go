package hub

import (
	"context"
	"slices"
)

// A Subscription is one waiter's interest in a channel.
type Subscription struct {
	h  *Hub
	ch *channel
	// c holds one wake-up: the hub sends on it under Hub.mu and never
	// blocks, dropping a wake-up when one is pending.
	c   chan struct{}
	tag string
	// note is the note of the last tagged message for this waiter not
	// yet taken by Note. Guarded by Hub.mu.
	note string
}

// Subscribe registers a waiter on channel, whose messages wake its
// waiters as wake says (see Wake), and returns once the server has the
// subscription, so that no message published after Subscribe returns is
// missed. It fails only when ctx ends or the hub is closed; if the
// connection breaks meanwhile, Subscribe returns and the reconnect wakes
// the waiter.
func (h *Hub) Subscribe(ctx context.Context, channel string, wake Wake) (*Subscription, error) {
	return h.Join(ctx, channel, wake, "")
}

// Live registers a waiter with tag ("" for none) on channel, stating
// wake as Subscribe does, if the channel is subscribed already and the
// server has confirmed it, and returns nil otherwise. A waiter that joins
// a live channel before it looks at a lock misses no message published
// after that look.
func (h *Hub) Live(channel string, wake Wake, tag string) *Subscription {
	wake.check()
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.channels[channel]
	if h.closed || ch == nil {
		return nil
	}
	if ch.wake != wake {
		panic(mismatch(ch, wake))
	}
	select {
	case <-ch.ready:
	default:
		return nil
	}
	return h.addLocked(ch, tag)
}

// Join is Subscribe for a waiter with tag: a message "<tag>:<note>" on
// channel wakes it alone (see Note).
func (h *Hub) Join(ctx context.Context, channel string, wake Wake, tag string) (*Subscription, error) {
	wake.check()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var l *link
	if h.sharded {
		var err error
		if l, err = h.shardLink(ctx, channel); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	ch := h.channelLocked(l, channel, wake)
	if ch.wake != wake {
		h.mu.Unlock()
		panic(mismatch(ch, wake))
	}
	s := h.addLocked(ch, tag)
	ready := ch.ready
	h.mu.Unlock()

	select {
	case <-ready:
		return s, nil
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	case <-h.stop:
		s.Close()
		return nil, ErrClosed
	}
}

// addLocked adds a waiter with tag to ch, which leaves the idle list.
func (h *Hub) addLocked(ch *channel, tag string) *Subscription {
	if len(ch.waiters) == 0 {
		h.reuseLocked(ch)
	}
	s := &Subscription{h: h, ch: ch, c: make(chan struct{}, 1), tag: tag}
	ch.waiters = append(ch.waiters, s)
	return s
}

// C delivers wake-ups: a signal means "retry now", or, when Note has a
// note, that a tagged message came. It is never closed.
func (s *Subscription) C() <-chan struct{} { return s.c }

// Note returns and clears the note of the last tagged message for this
// waiter, or on a count-down latch's channel the last message, "" when
// none came since the last call.
func (s *Subscription) Note() string {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	n := s.note
	s.note = ""
	return n
}

// Close drops the waiter. The last waiter on a channel unsubscribes it,
// at once or, with SetLinger, once it has been idle long enough, whatever
// its Wake: a semaphore's shared channel lingers too, so that a client
// that was its watcher lately takes the role again without a SUBSCRIBE.
// An unconsumed untagged wake-up passes to the next waiter. Close is
// idempotent.
func (s *Subscription) Close() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := s.ch
	i := slices.Index(ch.waiters, s)
	if i < 0 {
		return
	}
	ch.waiters = append(ch.waiters[:i], ch.waiters[i+1:]...)
	select {
	case <-s.c:
		if s.note == "" {
			ch.wakeOneLocked()
		}
	default:
	}
	if len(ch.waiters) > 0 || len(ch.listeners) > 0 || h.channels[ch.name] != ch || h.closed {
		return
	}
	h.leftLocked(ch)
}
