package hub

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/derive"
)

const (
	// healthInterval is how long a connection may stay silent before the
	// hub pings it; a second silent interval counts as a broken connection.
	healthInterval = 15 * time.Second
	// shardHealthInterval is healthInterval for a sharded link: a master
	// that stops answering may be failed over within seconds, and its
	// waiters must move to the promoted replica as soon as that happens.
	shardHealthInterval = time.Second
	minBackoff          = 50 * time.Millisecond
	maxBackoff          = 2 * time.Second
)

// A link is one subscription connection and the goroutine that reads it.
// ps is replaced only by that goroutine, under Hub.mu.
type link struct {
	addr string // node address in sharded mode, "" in global mode
	node *redis.Client
	ps   *redis.PubSub
	h    *Hub
	own  *redis.Client // a sharded link's own client for node (see ownClient)
	// unsubs counts, per channel, this hub's SUNSUBSCRIBEs on ps not yet
	// acknowledged, to tell them from those the server sends by itself.
	// The writer adds a channel as it sends one; the channel's entry goes
	// at its last acknowledgement (route) or when ps is replaced
	// (reopen), so it holds only channels with an unsubscribe in flight.
	// Guarded by Hub.mu.
	unsubs map[string]int

	// echo is the echo mark of the message read last, if it was one
	// (WakeTagged), for the message after it. Guarded by Hub.mu.
	echo echoMark

	writes []write       // subscription changes to send, in order; guarded by Hub.mu
	kick   chan struct{} // a write was queued
	done   chan struct{} // closed by close
}

// An echoMark names the message that an echo mark announces: payload on
// channel.
type echoMark struct {
	channel, payload string
}

// A write is one subscription change for a link's writer to send: a
// subscribe followed by a confirmation ping with payload token, or, with
// no token, an unsubscribe.
type write struct {
	channel string
	token   string
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
	return h.shardLinkLocked(addr, node), nil
}

// shardLinkLocked returns the link to the master node at addr, starting
// it on first use.
func (h *Hub) shardLinkLocked(addr string, node *redis.Client) *link {
	if l := h.links[addr]; l != nil {
		return l
	}
	l := &link{addr: addr, node: node, h: h, unsubs: make(map[string]int)}
	h.links[addr] = l
	h.startLocked(l)
	return l
}

func (h *Hub) startLocked(l *link) {
	l.ps = l.open()
	l.kick, l.done = make(chan struct{}, 1), make(chan struct{})
	h.wg.Add(2)
	go h.serve(l)
	go h.writer(l)
}

// queueLocked queues w for l's writer.
func (l *link) queueLocked(w write) {
	l.writes = append(l.writes, w)
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// writer sends l's subscription changes in the order the hub queued them,
// outside Hub.mu: connecting to a server that accepts but does not answer
// can take the dial and read timeouts, and deliveries and other waiters
// must not wait on that. An unsubscribe queued before a subscribe of the
// same channel is sent first, so the server ends up with what the hub
// decided last.
func (h *Hub) writer(l *link) {
	defer h.wg.Done()
	for {
		select {
		case <-l.kick:
		case <-l.done:
			return
		case <-h.stop:
			return
		}
		for {
			h.mu.Lock()
			if len(l.writes) == 0 || h.closed {
				h.mu.Unlock()
				break
			}
			w := l.writes[0]
			l.writes = l.writes[1:]
			if w.token == "" && l.node != nil {
				l.unsubs[w.channel]++
			}
			ps := l.ps
			h.mu.Unlock()
			h.send(l, ps, w)
		}
	}
}

// send sends w on ps, l's connection when w was taken from the queue.
func (h *Hub) send(l *link, ps *redis.PubSub, w write) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if w.token == "" {
		// A failed unsubscribe leaves the connection broken; its
		// reconnect subscribes only the channels still in use.
		_ = l.unsubscribe(ctx, ps, w.channel)
		return
	}
	err := l.subscribe(ctx, ps, w.channel)
	if err == nil {
		err = ps.Ping(ctx, w.token)
	}
	if err != nil {
		// The connection is broken: its reconnect resubscribes every
		// channel of the link and wakes the waiters. The waiters for
		// this confirmation need not wait for that.
		h.mu.Lock()
		if p, ok := h.pings[w.token]; ok {
			delete(h.pings, w.token)
			close(p.ready)
		}
		h.mu.Unlock()
	}
}

func (l *link) open() *redis.PubSub {
	ctx := context.Background()
	if l.node != nil {
		if l.own == nil {
			l.own = ownClient(l.node)
		}
		return l.own.SSubscribe(ctx)
	}
	return l.h.rdb.Subscribe(ctx)
}

// ownClient returns a client of a sharded link's own for node, which
// honours context deadlines and gives up connecting after a second: a
// master that stops answering must not hold a link up for the client's
// default timeouts while its replica takes over. (Reads of messages set
// their own timeout.)
func ownClient(node *redis.Client) *redis.Client {
	o := node.Options()
	return derive.Client(o, derive.Settings{
		HonourDeadline: true,
		DialTimeout:    min(o.DialTimeout, shardHealthInterval),
		ReadTimeout:    shardHealthInterval,
		WriteTimeout:   shardHealthInterval,
	})
}

// close stops l's writer and closes its connection and its own client,
// if any. It is called once, under Hub.mu, when l leaves Hub.links.
func (l *link) close() error {
	close(l.done)
	err := l.ps.Close()
	if l.own != nil {
		err = errors.Join(err, l.own.Close())
	}
	return err
}

func (l *link) subscribe(ctx context.Context, ps *redis.PubSub, channels ...string) error {
	if l.node != nil {
		return ps.SSubscribe(ctx, channels...)
	}
	return ps.Subscribe(ctx, channels...)
}

// unsubscribe unsubscribes channel on ps; a sharded link's writer has
// counted it in unsubs.
func (l *link) unsubscribe(ctx context.Context, ps *redis.PubSub, channel string) error {
	if l.node != nil {
		return ps.SUnsubscribe(ctx, channel)
	}
	return ps.Unsubscribe(ctx, channel)
}

// serve reads l until the hub closes. On a broken connection it wakes
// every waiter on the link (messages may have been lost), reopens the
// connection with backoff, resubscribes the link's channels, and wakes
// them again on the first reply from the new connection.
//
// A sharded link's waiters are not woken at the break: their master may
// be frozen and failing over, and an acquire sent to it would wait out
// the client's read timeout, however soon the lock is released on the
// promoted replica. They are woken once their channel is subscribed
// again, on the promoted master (rehome) or on this one (reconnect).
func (h *Hub) serve(l *link) {
	defer h.wg.Done()
	ctx := context.Background()
	backoff := minBackoff
	silent := 0
	broken := false
	interval := healthInterval
	if l.node != nil {
		interval = shardHealthInterval
	}
	for {
		// The context's deadline also bounds (re)connecting, which the
		// read timeout does not cover.
		rctx, cancel := context.WithTimeout(ctx, interval+writeTimeout)
		msg, err := l.ps.ReceiveTimeout(rctx, interval)
		cancel()
		if err == nil {
			silent, backoff = 0, minBackoff
			if broken {
				broken = false
				h.wakeLink(l, true)
			}
			if dropped := h.deliver(l, msg); len(dropped) > 0 {
				h.rehome(l, dropped)
			}
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
			h.log.Warn("relock: subscription connection failed; reconnecting", "node", h.where(l), "error", err)
		}
		broken, silent = true, 0
		h.wakeLink(l, l.node == nil)
		select {
		case <-h.stop:
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		if l.node != nil {
			// A sharded link looks for its master's replacement at
			// every break, so it keeps breaking quickly.
			backoff = min(backoff, shardHealthInterval/2)
		}
		if l.node != nil && !h.rehome(l, nil) {
			return
		}
		h.reopen(l)
	}
}

// where names the server l's connection goes to, for the logs: its
// node's address in sharded mode; in global mode, the client's server's
// address, the seeds of a cluster (whose client picks the node), or the
// master behind Sentinel (whose address the client resolves at each
// connection).
func (h *Hub) where(l *link) string {
	if l.addr != "" {
		return l.addr
	}
	switch c := h.rdb.(type) {
	case *redis.Client:
		// go-redis names a failover client's address "FailoverClient".
		if a := c.Options().Addr; a != "FailoverClient" {
			return a
		}
		return "the master behind Sentinel"
	case *redis.ClusterClient:
		return "cluster " + strings.Join(c.Options().Addrs, ",")
	}
	return fmt.Sprintf("%T", h.rdb)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// wakeLink releases the waiters still waiting for a subscription
// confirmation from l and, if waiters is set, wakes every waiter on l's
// channels.
func (h *Hub) wakeLink(l *link, waiters bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for token, p := range h.pings {
		if p.link == l {
			delete(h.pings, token)
			close(p.ready)
		}
	}
	if !waiters {
		return
	}
	for _, ch := range h.channels {
		if ch.link == l {
			ch.wakeAllLocked()
		}
	}
}

// reopen replaces l's connection and subscribes the channels in use on it.
//
// The subscribe is sent outside Hub.mu: connecting to a server that
// accepts but does not answer can take the dial and read timeouts, and
// waiters must not wait on that to come and go.
func (h *Hub) reopen(l *link) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	_ = l.ps.Close()
	l.ps = l.open()
	ps := l.ps
	clear(l.unsubs)
	names := h.channelsOfLocked(l)
	h.mu.Unlock()
	if len(names) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		// An error here surfaces again in serve's next read.
		_ = l.subscribe(ctx, ps, names...)
	}
}
