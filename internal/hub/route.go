package hub

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// deliver routes a message, pong or subscription change read from l,
// and then, with no lock held, tells a message to its channel's
// listeners. It returns the channels the server dropped without being
// asked (a sharded slot moved away), which the caller moves to their new
// owner.
func (h *Hub) deliver(l *link, msg any) (dropped []string) {
	dropped, listeners := h.route(l, msg)
	if len(listeners) > 0 {
		payload := msg.(*redis.Message).Payload
		for _, f := range listeners {
			f(payload)
		}
	}
	return dropped
}

// route is deliver's part under Hub.mu: it also returns the listeners a
// message is for.
func (h *Hub) route(l *link, msg any) (dropped []string, listeners []func(string)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// An echo mark holds for the one message after it on l, whatever
	// that is.
	echo := l.echo
	l.echo = echoMark{}
	switch m := msg.(type) {
	case *redis.Subscription:
		if m.Kind != "sunsubscribe" {
			return nil, nil
		}
		if n := l.unsubs[m.Channel]; n > 0 {
			if n == 1 {
				delete(l.unsubs, m.Channel)
			} else {
				l.unsubs[m.Channel] = n - 1
			}
			return nil, nil
		}
		if ch := h.channels[m.Channel]; ch != nil && ch.link == l {
			return []string{m.Channel}, nil
		}
	case *redis.Message:
		ch := h.channels[m.Channel]
		switch {
		case ch == nil:
			return nil, nil
		case ch.wake.kind == wakeTagged && strings.HasPrefix(m.Payload, "="):
			l.echo = echoMark{channel: ch.wake.echoes, payload: m.Payload[1:]}
		case echo.channel == m.Channel && echo.payload == m.Payload:
			// A relock script's own message, whose waiters it woke.
		default:
			ch.wakeLocked(m.Payload)
		}
		return nil, ch.listeners
	case *redis.Pong:
		if p, ok := h.pings[m.Payload]; ok {
			delete(h.pings, m.Payload)
			close(p.ready)
			if ch := p.ch; ch.rehomed && ch.ready == p.ready {
				ch.rehomed = false
				ch.wakeAllLocked()
			}
		}
	}
	return nil, nil
}
