package hub

import (
	"strconv"
	"time"
)

// channel is one subscribed channel. All fields are guarded by Hub.mu.
type channel struct {
	name    string
	wake    Wake // its first subscriber's
	link    *link
	waiters []*Subscription // wake-one order: least recently woken first
	// listeners are told every message (Listen). The slice is never
	// changed in place, only replaced, so that a delivery can call its
	// listeners after releasing Hub.mu.
	listeners []func(payload string)
	ready     chan struct{} // closed once the server has the subscription
	// rehomed: the channel moved to another master's link; wake its
	// waiters again once the new subscription is confirmed.
	rehomed bool
	left    time.Time // when its last waiter left, if it has none
	// wakes changes each time every waiter is woken: each message on a
	// latch's channel (WakeAll), each reconnection (see Hub.Wakes). It
	// is drawn from wakeStamps, so that no two subscriptions of a
	// channel, one dropped and one made later, share a value.
	wakes uint64
}

// pending is a subscription sent on link and not yet confirmed: its
// channel and the ready it closes. Each ready has one token, so it is
// closed once, when its entry leaves Hub.pings.
type pending struct {
	ch    *channel
	ready chan struct{}
	link  *link
}

// channelLocked returns channel, subscribing it first with wake if it is
// not: on l, the link shardLink found in sharded mode (nil in global
// mode). A channel subscribed already keeps its own Wake: the caller
// checks that it is wake.
func (h *Hub) channelLocked(l *link, channel string, wake Wake) *channel {
	if ch := h.channels[channel]; ch != nil {
		return ch
	}
	if l == nil {
		l = h.linkLocked("")
	} else {
		// The link may have been retired since shardLink found it.
		l = h.shardLinkLocked(l.addr, l.node)
	}
	return h.subscribeLocked(l, channel, wake)
}

// subscribeLocked subscribes a new channel on l and sends a ping whose
// reply confirms the subscription: the server answers a connection's
// commands in order, so the pong arrives after the subscription is in
// place. l's writer sends both (see link.writer).
func (h *Hub) subscribeLocked(l *link, name string, wake Wake) *channel {
	ch := &channel{name: name, wake: wake, wakes: wakeStamps.Add(1)}
	h.channels[name] = ch
	h.attachLocked(ch, l)
	return ch
}

// attachLocked queues ch's subscription on l and arranges for ch.ready to
// close once the server confirms it.
func (h *Hub) attachLocked(ch *channel, l *link) {
	ch.link, ch.ready = l, make(chan struct{})
	h.nextPing++
	token := "relock:" + strconv.FormatUint(h.nextPing, 10)
	h.pings[token] = pending{ch: ch, ready: ch.ready, link: l}
	l.queueLocked(write{channel: ch.name, token: token})
}

// dropLocked unsubscribes ch, which has no waiters.
func (h *Hub) dropLocked(ch *channel) {
	delete(h.channels, ch.name)
	ch.link.queueLocked(write{channel: ch.name})
}
