package hub

import (
	"strconv"
	"strings"
	"sync/atomic"
)

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
