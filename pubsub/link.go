package pubsub

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// healthInterval is how long a connection may stay silent before the
	// hub pings it; a second silent interval counts as a broken connection.
	healthInterval = 15 * time.Second
	minBackoff     = 50 * time.Millisecond
	maxBackoff     = 2 * time.Second
)

// A link is one subscription connection and the goroutine that reads it.
// ps is replaced only by that goroutine, under Hub.mu.
type link struct {
	addr string // node address in sharded mode, "" in global mode
	node *redis.Client
	ps   *redis.PubSub
	h    *Hub
}

// linkLocked returns the link for addr, starting it on first use.
func (h *Hub) linkLocked(addr string) *link {
	if l := h.links[addr]; l != nil {
		return l
	}
	l := &link{addr: addr, h: h}
	h.links[addr] = l
	h.startLocked(l)
	return l
}

// shardLink returns the link to the master owning channel's slot.
func (h *Hub) shardLink(ctx context.Context, channel string) (*link, error) {
	cc, ok := h.rdb.(*redis.ClusterClient)
	if !ok {
		return nil, errors.New("pubsub: sharded mode needs a *redis.ClusterClient")
	}
	node, err := cc.MasterForKey(ctx, channel)
	if err != nil {
		return nil, err
	}
	addr := node.Options().Addr
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrClosed
	}
	if l := h.links[addr]; l != nil {
		return l, nil
	}
	l := &link{addr: addr, node: node, h: h}
	h.links[addr] = l
	h.startLocked(l)
	return l, nil
}

func (h *Hub) startLocked(l *link) {
	l.ps = l.open()
	h.wg.Add(1)
	go h.serve(l)
}

func (l *link) open() *redis.PubSub {
	ctx := context.Background()
	if l.node != nil {
		return l.node.SSubscribe(ctx)
	}
	return l.h.rdb.Subscribe(ctx)
}

func (l *link) subscribe(ctx context.Context, channels ...string) error {
	if l.node != nil {
		return l.ps.SSubscribe(ctx, channels...)
	}
	return l.ps.Subscribe(ctx, channels...)
}

func (l *link) unsubscribe(ctx context.Context, channel string) error {
	if l.node != nil {
		return l.ps.SUnsubscribe(ctx, channel)
	}
	return l.ps.Unsubscribe(ctx, channel)
}

// serve reads l until the hub closes. On a broken connection it wakes
// every waiter on the link (messages may have been lost), reopens the
// connection with backoff, resubscribes the link's channels, and wakes
// them again on the first reply from the new connection.
func (h *Hub) serve(l *link) {
	defer h.wg.Done()
	ctx := context.Background()
	backoff := minBackoff
	silent := 0
	broken := false
	for {
		msg, err := l.ps.ReceiveTimeout(ctx, healthInterval)
		if err == nil {
			silent, backoff = 0, minBackoff
			if broken {
				broken = false
				h.wakeLink(l)
			}
			h.deliver(msg)
			continue
		}
		select {
		case <-h.stop:
			return
		default:
		}
		if isTimeout(err) && silent == 0 {
			silent++
			pctx, cancel := context.WithTimeout(ctx, writeTimeout)
			err = l.ps.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
		}
		if h.log != nil {
			h.log.Warn("relock: subscription connection failed; reconnecting", "node", l.addr, "error", err)
		}
		broken, silent = true, 0
		h.wakeLink(l)
		select {
		case <-h.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		h.reopen(l)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// wakeLink wakes every waiter on l's channels and releases the waiters
// still waiting for a subscription confirmation from it.
func (h *Hub) wakeLink(l *link) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for token, ch := range h.pings {
		if ch.link == l {
			delete(h.pings, token)
			close(ch.ready)
		}
	}
	for _, ch := range h.channels {
		if ch.link == l {
			ch.wakeAllLocked()
		}
	}
}

// reopen replaces l's connection and subscribes the channels in use on it.
func (h *Hub) reopen(l *link) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	_ = l.ps.Close()
	l.ps = l.open()
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	var names []string
	for _, ch := range h.channels {
		if ch.link == l {
			names = append(names, ch.name)
		}
	}
	if len(names) > 0 {
		// An error here surfaces again in serve's next read.
		_ = l.subscribe(ctx, names...)
	}
}
