// Package renew keeps the leases of held locks alive with one goroutine
// per client, however many locks it holds. It is package watchdog's
// implementation, with what only relock's own packages use: Start, which
// keeps a Lease in the caller's record of the lock and tells a Holder,
// saving an allocation a lock; Lease.Check, for a notice that a lock may
// be gone; OnRound, for relock's statistics; and Len.
//
// Every interval (a third of the lease) the watchdog sends one renewal per
// held lock, in batches: a batch is one pipeline of at most the batch size
// (SetBatchSize, DefaultBatchSize by default) renewals, one round trip per
// Redis node, with a deadline of its own (the interval). The leases of a
// timeout sit in 16 slots, each renewed at its own phase of the interval:
// a few leases share one slot and so one batch an interval, as many as a
// batch takes fill one slot after another, and beyond 16 batches' worth
// they spread evenly over every slot, so that a client's renewals come as
// a batch or a few every sixteenth of an interval, never as one burst
// too large to answer within it. At most 4 batches are out at once: one
// stuck on a dead connection holds back no other. A lock may have a
// lease of its own (Renewal.Timeout), renewed every third of that: the
// leases of each timeout have their own slots, and a batch also takes
// the leases of any slot nearly due that fit in it, so that a few short
// leases cost their own batches and the rest ride along. A go-redis
// cluster pipeline splits by node, and a renewal touches only keys in
// its lock's slot, so batches never hit CROSSSLOT. Renewals go out as
// EVALSHA; those the server answers NOSCRIPT (a restarted or flushed
// server) are sent again as EVAL.
//
// A lease ends as package watchdog's doc says (Stop, ErrGone, or
// ErrExpired a margin before the last successful send plus the timeout).
// A failed batch's slots are sent again a fifth of an interval (at most a
// second) after each failure, until that deadline: a lease is lost only
// when no renewal of it succeeded for that long, however many leases the
// watchdog holds.
package renew

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/derive"
	"github.com/relock-go/relock/internal/sentinel"
)

var (
	// ErrGone is the reason a lease is lost when its renewal replies 0:
	// the lock is gone from Redis, or held by someone else.
	ErrGone = errors.New("watchdog: renewal found the lock gone")
	// ErrExpired is the reason a lease is lost when no renewal succeeded
	// before the server may have expired it.
	ErrExpired = errors.New("watchdog: no successful renewal before the lease could expire")
	// ErrClosed is returned by Watch and Start after Close: the one
	// closed sentinel (package sentinel).
	ErrClosed = sentinel.ErrClosed
)

// A Renewal is the script call that renews one lock. The script must reply
// 1 while the lock is held (after extending it) and 0 once it is gone.
type Renewal struct {
	// Script is the renewal script, such as lua.Renew() for a
	// Redisson RLock.
	Script *redis.Script
	// Keys and Args are the script's KEYS and ARGV. Every key must hash
	// to one slot on Redis Cluster.
	Keys []string
	Args []any
	// Timeout is the lease the script sets, when it is not the
	// watchdog's (0): the lease is renewed every Timeout/3, and reported
	// lost as SetMargin says for a lease of that timeout. It must not
	// be negative.
	Timeout time.Duration
}

// A Lease is one lock kept alive by a Watchdog. A zero Lease is ready
// for Start; a started one must not be copied.
type Lease struct {
	// Set by Start, read-only after.
	w    *Watchdog
	r    Renewal
	lost Holder
	slot *slot // of its timeout's schedule

	// Guarded by w.mu.
	renewed time.Time // send time of the last acquire or renewal that succeeded
	ended   bool
	stopped bool // by Stop: lost must not be called any more
	// Check's state (check.go): gone is the reason a renewal that finds
	// the lock gone reports, instead of ErrGone, until a renewal sent
	// after checked finds it held; due tells that the lease is in
	// Watchdog.due.
	gone    error
	checked time.Time
	due     bool
}

// Stop ends the lease's renewals. Once Stop returns, lost is not called
// unless the call had already begun (as with time.Timer's Stop). Stop is
// idempotent, and lost may call it.
func (l *Lease) Stop() {
	l.w.mu.Lock()
	defer l.w.mu.Unlock()
	l.ended, l.stopped = true, true
	l.w.dropLocked(l)
}

// A Watchdog renews leases in bounded batches. Its goroutine runs from
// New until Close.
type Watchdog struct {
	rdb     redis.UniversalClient
	timeout time.Duration
	log     *slog.Logger

	mu        sync.Mutex
	schedules map[time.Duration]*schedule // by timeout, for the leases' timeouts
	count     int                         // leases in the schedules' slots
	closed    bool
	margin    time.Duration // see SetMargin
	size      int           // see SetBatchSize
	// armed and ticking (guarded by mu) are when run's expiry timer and
	// its tick fire next (ticking zero while no slot is waiting); a
	// lease whose deadline comes sooner, or that makes a slot due
	// sooner, wakes run through rearm (buffered, never closed) to set
	// them again.
	armed   time.Time
	ticking time.Time
	rearm   chan struct{}
	// due (guarded by mu) lists the leases Check asked to renew now,
	// in a batch of their own; checks (buffered, never closed) tells run that
	// there are some.
	due    []*Lease
	checks chan struct{}
	// onRound is told of each batch (OnRound).
	onRound func(leases, failures, lost int, took time.Duration)

	closing chan struct{} // closed by Close
	done    chan struct{}

	closeRdb func() error
}

// New starts a watchdog for leases of timeout, which must be positive:
// each Renewal must extend its lock to timeout (its Args say so), and
// the watchdog renews it every timeout/3. Unless rdb cuts calls off at
// their context's deadline (ContextTimeoutEnabled), the watchdog sends
// its rounds on a client of its own with rdb's options, which Close
// closes. log, if not nil, is told of failed rounds.
func New(rdb redis.UniversalClient, timeout time.Duration, log *slog.Logger) *Watchdog {
	rdb, closeRdb := deadlineClient(rdb)
	w := &Watchdog{
		closeRdb:  closeRdb,
		rdb:       rdb,
		timeout:   timeout,
		log:       log,
		schedules: make(map[time.Duration]*schedule),
		margin:    timeout / 10,
		size:      DefaultBatchSize,
		rearm:     make(chan struct{}, 1),
		checks:    make(chan struct{}, 1),
		closing:   make(chan struct{}),
		done:      make(chan struct{}),
	}
	go w.run()
	return w
}

// OnRound sets f to be called, from the watchdog's goroutine with no lock
// held, after each batch: how many leases it had, how many renewals got
// no answer, how many leases were lost, and how long the batch took. It
// must not block.
func (w *Watchdog) OnRound(f func(leases, failures, lost int, took time.Duration)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.onRound = f
}

// A Holder is told when its lease ends other than by Lease.Stop or
// Close (see Start).
type Holder interface {
	// LeaseLost is called at most once, from the watchdog's goroutine; it
	// must not block.
	LeaseLost(reason error)
}

// lostFunc is Watch's lost as a Holder.
type lostFunc func(reason error)

func (f lostFunc) LeaseLost(reason error) { f(reason) }

// Watch starts renewing a lock acquired by a call sent at acquired. lost is
// called at most once, from the watchdog's goroutine, when the lease ends
// other than by Lease.Stop or Close; it must not block.
func (w *Watchdog) Watch(r Renewal, acquired time.Time, lost func(reason error)) (*Lease, error) {
	l := new(Lease)
	if err := w.Start(l, r, acquired, lostFunc(lost)); err != nil {
		return nil, err
	}
	return l, nil
}

// Start is Watch for a zero Lease l that the caller keeps in a record of
// its own, such as its local record of the lock, which saves it an
// allocation a lock: h is told when the lease ends as a Holder says. A
// Lease is started once.
func (w *Watchdog) Start(l *Lease, r Renewal, acquired time.Time, h Holder) error {
	if r.Timeout < 0 {
		return fmt.Errorf("watchdog: negative renewal timeout %v", r.Timeout)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	s := w.scheduleLocked(cmp.Or(r.Timeout, w.timeout), acquired)
	sl := w.slotLocked(s, acquired, time.Now())
	if sl.leases == nil {
		sl.leases = make(map[*Lease]struct{})
	}
	l.w, l.r, l.lost, l.renewed, l.slot = w, r, h, acquired, sl
	deadline := w.deadlineLocked(l)
	if len(sl.leases) == 0 || deadline.Before(sl.earliest) {
		sl.earliest = deadline
	}
	sl.leases[l] = struct{}{}
	s.leases++
	w.count++
	if w.ticking.IsZero() || sl.next.Before(w.ticking) || deadline.Before(w.armed) {
		// A batch due before run's tick fires, or a deadline before its
		// expiry timer does (an acquire sent long ago, a wide margin, a
		// short lease).
		w.wake()
	}
	return nil
}

// Len reports how many leases the watchdog renews.
func (w *Watchdog) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.count
}

// Close ends every lease without calling lost and waits for the
// watchdog's goroutines to return. It is idempotent: only the first call
// returns the error of closing the watchdog's own client (see New).
func (w *Watchdog) Close() error {
	w.mu.Lock()
	first := !w.closed
	if first {
		w.closed = true
		for _, s := range w.schedules {
			for k := range s.slots {
				for l := range s.slots[k].leases {
					l.ended = true
				}
				clear(s.slots[k].leases)
			}
		}
		w.count = 0
		clear(w.schedules)
		close(w.closing)
	}
	w.mu.Unlock()
	var err error
	if first {
		// Closing the watchdog's own client, if it has one, cuts short
		// a round stuck on a frozen server.
		err = w.closeRdb()
	}
	<-w.done
	return err
}

// run owns the renewal batches. It wakes when a slot is due, queues the
// batches of every slot due (collectLocked), and sends them, at most
// inflight at once, each cut off by its context's deadline (the client
// honours deadlines: see deadlineClient). A slot whose batches are out
// is not due again until they are back; the expiry timer keeps firing
// meanwhile, so a stalled server cannot delay a loss report. A Check
// queues a batch of the leases checked ahead of the others. After a
// batch with errors, the slots of the leases that failed are due again
// after their retry wait.
func (w *Watchdog) run() {
	defer close(w.done)
	// With no lease nearer its deadline, the expiry timer fires every
	// interval of the watchdog's timeout.
	idle := w.timeout / 3
	tick := time.NewTimer(idle)
	defer tick.Stop()
	expiry := time.NewTimer(idle)
	defer expiry.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	results := make(chan batch, inflight)
	var queue []batch
	out := 0
	for {
		for ; out < inflight && len(queue) > 0; out++ {
			go w.send(ctx, queue[0], results)
			queue[0] = batch{}
			queue = queue[1:]
		}
		next, scheduled, untilExpiry := w.untilNext(idle)
		expiry.Reset(untilExpiry)
		var ticks <-chan time.Time
		if scheduled {
			tick.Reset(next)
			ticks = tick.C
		}
		select {
		case <-w.closing:
			cancel()
			for ; out > 0; out-- {
				<-results
			}
			return
		case <-ticks:
			w.mu.Lock()
			queue = append(queue, w.collectLocked(time.Now())...)
			w.mu.Unlock()
		case <-w.checks:
			w.mu.Lock()
			queue = append(w.checkedLocked(), queue...)
			w.mu.Unlock()
		case b := <-results:
			out--
			w.apply(b)
		case now := <-expiry.C:
			w.expire(now)
		case <-w.rearm:
		}
	}
}

// inflight bounds the batches a watchdog has out at once: a batch stuck
// on a dead connection holds back no other, and a client's renewals use
// a few of its pool's connections at most.
const inflight = 4

func (w *Watchdog) expire(now time.Time) {
	var lost []*Lease
	w.mu.Lock()
	for _, s := range w.schedules {
		for k := range s.slots {
			if sl := &s.slots[k]; len(sl.leases) > 0 && !now.Before(sl.earliest) {
				lost = w.scanLocked(sl, now, lost)
			}
		}
	}
	w.mu.Unlock()
	for _, l := range lost {
		w.fire(l, ErrExpired)
	}
}

func (w *Watchdog) endLocked(l *Lease) *Lease {
	l.ended = true
	w.dropLocked(l)
	return l
}

// fire calls l's lost callback unless l was stopped since it ended: an
// earlier callback of the same batch, or any Lease.Stop that returned
// before this point, wins.
func (w *Watchdog) fire(l *Lease, reason error) {
	w.mu.Lock()
	stopped := l.stopped
	w.mu.Unlock()
	if !stopped {
		l.lost.LeaseLost(reason)
	}
}

// deadlineClient returns a client that cuts a call off at its context's
// deadline: rdb itself when it does (ContextTimeoutEnabled), otherwise a
// client of the watchdog's own with rdb's options and that setting.
func deadlineClient(rdb redis.UniversalClient) (redis.UniversalClient, func() error) {
	return derive.Unless(rdb, derive.Settings{HonourDeadline: true}, func(_ int, deadlines bool) bool { return deadlines })
}
