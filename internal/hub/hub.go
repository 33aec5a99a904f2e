package hub

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrClosed is returned by Subscribe, Join and Listen after Close.
var ErrClosed = errors.New("pubsub: hub closed")

// writeTimeout bounds each subscribe, unsubscribe and ping the hub sends.
const writeTimeout = 5 * time.Second

// A Hub multiplexes waiters' subscriptions onto shared connections.
type Hub struct {
	rdb     redis.UniversalClient
	sharded bool
	log     *slog.Logger

	// linger and maxIdle are set by SetLinger before first use.
	linger  time.Duration
	maxIdle int

	mu       sync.Mutex
	links    map[string]*link    // by node address; "" in global mode
	channels map[string]*channel // subscribed channels, with waiters or idle
	pings    map[string]pending  // confirmation ping payload -> subscription awaiting it
	nextPing uint64
	closed   bool
	// idle lists the subscribed channels without waiters, least recently
	// left first; sweeping tells whether the sweeper goroutine runs.
	idle     []*channel
	sweeping bool

	stop chan struct{}
	wg   sync.WaitGroup
}

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

// A Subscription is one waiter's interest in a channel.
type Subscription struct {
	h   *Hub
	ch  *channel
	c   chan struct{}
	tag string
	// note is the note of the last tagged message for this waiter not
	// yet taken by Note. Guarded by Hub.mu.
	note string
}

// New returns a hub for rdb. In sharded mode rdb must be a
// *redis.ClusterClient and channels are subscribed with SSUBSCRIBE on the
// node that owns their slot.
func New(rdb redis.UniversalClient, sharded bool, log *slog.Logger) *Hub {
	return &Hub{
		rdb:      rdb,
		sharded:  sharded,
		log:      log,
		links:    make(map[string]*link),
		channels: make(map[string]*channel),
		pings:    make(map[string]pending),
		stop:     make(chan struct{}),
	}
}

// SetLinger keeps up to max channels subscribed for idle after their last
// waiter leaves; past max, the one left longest ago is unsubscribed
// first. Zero values (the default) unsubscribe a channel as its last
// waiter leaves. Call it before the hub's first use.
func (h *Hub) SetLinger(idle time.Duration, max int) {
	h.linger, h.maxIdle = idle, max
	if idle <= 0 || max <= 0 {
		h.linger, h.maxIdle = 0, 0
	}
}

// Done is closed when the hub is closed.
func (h *Hub) Done() <-chan struct{} { return h.stop }

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

// addLocked adds a waiter with tag to ch, which leaves the idle list.
func (h *Hub) addLocked(ch *channel, tag string) *Subscription {
	if len(ch.waiters) == 0 {
		if i := slices.Index(h.idle, ch); i >= 0 {
			h.idle = slices.Delete(h.idle, i, i+1)
		}
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
	i := indexOf(ch.waiters, s)
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
	if h.linger == 0 {
		h.dropLocked(ch)
		return
	}
	ch.left = time.Now()
	h.idle = append(h.idle, ch)
	if len(h.idle) > h.maxIdle {
		h.dropLocked(h.idle[0])
		h.idle = h.idle[1:]
	}
	if !h.sweeping {
		h.sweeping = true
		h.wg.Add(1)
		go h.sweep()
	}
}

// dropLocked unsubscribes ch, which has no waiters.
func (h *Hub) dropLocked(ch *channel) {
	delete(h.channels, ch.name)
	ch.link.queueLocked(write{channel: ch.name})
}

// sweep unsubscribes the channels idle for longer than the linger, until
// the hub closes. The hub owns it: Close waits for it.
func (h *Hub) sweep() {
	defer h.wg.Done()
	tick := time.NewTicker(max(h.linger/4, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-h.stop:
			return
		case now := <-tick.C:
			h.mu.Lock()
			n := 0
			for n < len(h.idle) && now.Sub(h.idle[n].left) >= h.linger {
				h.dropLocked(h.idle[n])
				n++
			}
			h.idle = h.idle[n:]
			h.mu.Unlock()
		}
	}
}

func indexOf(subs []*Subscription, s *Subscription) int {
	for i, w := range subs {
		if w == s {
			return i
		}
	}
	return -1
}

// notifyLocked hands note to the first waiter tagged tag, if any, and
// wakes the others tagged tag without it. Waiters share a tag when they
// are calls of one owner: when one takes a grant, the others re-enter the
// lock their owner now holds (the lock types' attempts sort out which
// call took the grant), where they would otherwise sleep until their
// timers.
func (ch *channel) notifyLocked(tag, note string) {
	handed := false
	for _, s := range ch.waiters {
		if s.tag != tag {
			continue
		}
		if !handed {
			s.note, handed = note, true
		}
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}

// A Wake is a channel's wake policy: how a message on it wakes the
// channel's waiters. Each Subscribe, Join, Live and Listen states one,
// and the channel's first subscriber fixes it for as long as the hub
// keeps the channel subscribed (lingering included); a channel
// subscribed anew later takes its new first subscriber's. The policies
// are WakeOne, WakeCount, WakeAll and those WakeTagged returns; two
// Wakes are equal when they are the same policy (for WakeTagged, with
// the same shared channel).
//
// Stating another policy than the channel has is a programming error
// (two parts of a program disagree on what its messages mean), as is
// stating the zero Wake, none: the call panics, and leaves the hub as it
// was, the channel's subscribers and policy unchanged.
//
// Under every policy, a listener (Listen) is told every message, and
// every waiter is woken when the channel's connection comes back.
type Wake struct {
	kind wakeKind
	// echoes is WakeTagged's: the channel its echo marks speak of.
	echoes string
}

// The wake policies but WakeTagged's.
var (
	// WakeOne is a lock channel's policy, Redisson's convention: "0"
	// wakes one waiter, the one woken longest ago; "<tag>:<note>" (any
	// payload with a colon) hands note to the first waiter that joined
	// with tag and wakes it and the others with that tag (see Join),
	// and nobody when none has it; any other payload wakes every
	// waiter.
	WakeOne = Wake{kind: wakeOne}
	// WakeCount is a semaphore's shared channel's policy (Redisson's
	// RedissonSemaphore's and RedissonPermitExpirableSemaphore's): a
	// decimal n, the permits now available, wakes up to n waiters, least
	// recently woken first, so 0 wakes nobody; any other payload wakes
	// every waiter. relock's waiters listen on their client's channel
	// (WakeTagged) and only a semaphore's watcher listens here, so that
	// a release wakes the relock waiters it can satisfy, and not one
	// waiter in every client.
	WakeCount = Wake{kind: wakeCount}
	// WakeAll is a count-down latch's channel's policy (Redisson's
	// RedissonCountDownLatch's): every message wakes every waiter and is
	// its Note: the last one, or "0" (Redisson's "opened") if one came,
	// when several came before the waiter looked. Wakes stamps each.
	WakeAll = Wake{kind: wakeAll}
)

// WakeTagged returns the policy of a relock client's own channel for a
// semaphore's waiters, whose echo marks speak of echoes, the
// semaphore's shared channel: "<tag>:<note>" hands the note to the
// waiter tagged tag, as under WakeOne; "=<count>" is an echo mark, which
// wakes nobody; anything else, "0" included, wakes every waiter. An echo
// mark says that the message right after it on the connection, if it is
// count on echoes, comes from a relock script that woke relock's waiters
// itself: the hub wakes nobody for it either. A relock script publishes
// the two in a row, and the server delivers them to a connection in
// that order with nothing between them, so the mark pairs with its own
// message and never with another client's release.
func WakeTagged(echoes string) Wake { return Wake{kind: wakeTagged, echoes: echoes} }

// A wakeKind is a Wake's policy, without WakeTagged's shared channel.
type wakeKind int

const (
	wakeNone wakeKind = iota // the zero Wake
	wakeOne
	wakeCount
	wakeAll
	wakeTagged
)

// String names w, for the panics of check and mismatch.
func (w Wake) String() string {
	switch w.kind {
	case wakeOne:
		return "WakeOne"
	case wakeCount:
		return "WakeCount"
	case wakeAll:
		return "WakeAll"
	case wakeTagged:
		return "WakeTagged(" + strconv.Quote(w.echoes) + ")"
	}
	return "the zero Wake"
}

// check panics when w is the zero Wake.
func (w Wake) check() {
	if w.kind == wakeNone {
		panic("pubsub: no wake policy stated (the zero Wake)")
	}
}

// mismatch is the panic of a subscriber that states w on ch, whose
// policy is another (see Wake).
func mismatch(ch *channel, w Wake) string {
	return "pubsub: channel " + strconv.Quote(ch.name) + " subscribed with " + w.String() + ", but it has " + ch.wake.String()
}

// wakeLocked wakes ch's waiters for a message with payload.
func (ch *channel) wakeLocked(payload string) {
	switch ch.wake.kind {
	case wakeCount:
		n, err := strconv.ParseInt(payload, 10, 64)
		if err != nil {
			ch.wakeAllLocked()
			return
		}
		ch.wakeCountLocked(n)
		return
	case wakeAll:
		ch.broadcastLocked(payload)
		return
	}
	switch tag, note, tagged := strings.Cut(payload, ":"); {
	case tagged:
		ch.notifyLocked(tag, note)
	case payload == "0" && ch.wake.kind == wakeOne:
		ch.wakeOneLocked()
	default:
		ch.wakeAllLocked()
	}
}

// wakeOneLocked signals the least recently woken waiter that has no
// pending signal and moves it to the back of the line.
func (ch *channel) wakeOneLocked() {
	for i, s := range ch.waiters {
		select {
		case s.c <- struct{}{}:
			ch.waiters = append(append(ch.waiters[:i:i], ch.waiters[i+1:]...), s)
			return
		default:
		}
	}
}

// wakeCountLocked wakes up to n waiters with no pending signal, least
// recently woken first, and moves the woken to the back of the line.
func (ch *channel) wakeCountLocked(n int64) {
	var woken []*Subscription
	kept := ch.waiters[:0]
	for _, s := range ch.waiters {
		if int64(len(woken)) < n {
			select {
			case s.c <- struct{}{}:
				woken = append(woken, s)
				continue
			default:
			}
		}
		kept = append(kept, s)
	}
	ch.waiters = append(kept, woken...)
}

// broadcastLocked wakes every waiter with payload as its note (a latch's
// channel: the waiter tells an opening from a new count without a read).
// An opening, "0", is kept over the messages after it until the waiter
// takes it: the latch did open while it waited.
func (ch *channel) broadcastLocked(payload string) {
	ch.wakes = wakeStamps.Add(1)
	for _, s := range ch.waiters {
		if s.note != "0" {
			s.note = payload
		}
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}

func (ch *channel) wakeAllLocked() {
	ch.wakes = wakeStamps.Add(1)
	for _, s := range ch.waiters {
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}

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
		if l.unsubs[m.Channel] > 0 {
			l.unsubs[m.Channel]--
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

// Close closes the hub's connections and waits for their goroutines.
// Waiters see Done closed; their subscriptions may still be closed.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.wg.Wait()
		return nil
	}
	h.closed = true
	close(h.stop)
	var err error
	for _, l := range h.links {
		err = errors.Join(err, l.close())
	}
	h.mu.Unlock()
	h.wg.Wait()
	return err
}

// wakeStamps numbers the hub's wake-everyone events, process-wide.
var wakeStamps atomic.Uint64

// Wakes returns a stamp that changes each time every waiter on channel
// is woken (each message on a latch's channel, each reconnection) and
// never repeats, and whether the channel is subscribed and the server has
// confirmed it. What a waiter on a live latch channel read of the latch
// after the stamp was n stays true while the stamp is n: any change
// since would have been published, and the message would have changed
// it.
func (h *Hub) Wakes(channel string) (n uint64, live bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ch := h.channels[channel]
	if ch == nil {
		return 0, false
	}
	select {
	case <-ch.ready:
		return ch.wakes, true
	default:
		return ch.wakes, false
	}
}

// Connections reports how many subscription connections the hub holds.
func (h *Hub) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.links)
}

// Stats reports the waiters on the hub's channels, and how many channels
// are subscribed, with waiters or lingering.
func (h *Hub) Stats() (waiters, channels int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, ch := range h.channels {
		waiters += len(ch.waiters)
		// A channel only listeners keep (a client's own notice channel)
		// is the hub's fixed cost, not waiters' or lingering ones.
		if len(ch.waiters) > 0 || len(ch.listeners) == 0 {
			channels++
		}
	}
	return waiters, channels
}
