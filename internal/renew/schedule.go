package renew

import (
	"math/bits"
	"time"
)

// phases is how many slots a schedule spreads its leases over: slot k is
// renewed every interval, at first k sixteenths of an interval before
// slot 0 (a retry moves a slot's phase). A schedule's renewals come in
// at most phases batches an interval (more once a slot holds more than a
// batch, and for retries and checks), never in one burst.
const phases = 16

// A schedule is when the leases of one timeout are renewed: each of its
// slots once every third of it. The watchdog keeps one for each timeout
// its leases have, from the Start of the first lease of that timeout
// until the last ends, and the schedule of its own timeout from the first
// Start on; a batch renews the leases of the slots due (see
// collectLocked).
type schedule struct {
	// Set when the schedule is made, read-only after.
	timeout  time.Duration
	interval time.Duration // timeout/3
	retry    time.Duration // the wait after a failed renewal (retryLocked)

	// Guarded by Watchdog.mu.
	life    time.Duration // timeout less its margin: a lease's deadline is its renewed + life
	leases  int           // how many leases its slots hold
	filling *slot         // the slot slotLocked picked last
	full    bool          // every slot in time was full at that pick, and no lease has ended since
	slots   [phases]slot
}

// A slot is the leases of a schedule renewed at one phase of its
// interval. Its fields are guarded by Watchdog.mu.
type slot struct {
	s      *schedule
	phase  int                 // its index in s.slots
	leases map[*Lease]struct{} // made with the slot's first lease
	next   time.Time           // when its leases are due for renewal
	// earliest is no later than the deadline of any of its leases: Start
	// lowers it, and a scan (expire, or apply once the slot's batches
	// are back) sets it exact. run's expiry timer looks no further.
	earliest time.Time
	pending  int // batches of its leases queued or in flight (not due meanwhile)
}

// scheduleLocked returns the schedule of leases of timeout, made with
// its slot 0 first due an interval after acquired and the others spread
// over the interval before that if there is none yet; w.mu is held.
func (w *Watchdog) scheduleLocked(timeout time.Duration, acquired time.Time) *schedule {
	if s := w.schedules[timeout]; s != nil {
		return s
	}
	interval := timeout / 3
	s := &schedule{
		timeout:  timeout,
		interval: interval,
		// A master that failed over is usually replaced within seconds,
		// and the leases must be renewed on the new one before they can
		// expire: not a whole interval later.
		retry: min(interval/5, time.Second),
		life:  timeout - w.marginLocked(timeout),
	}
	first := acquired.Add(interval)
	for k := range s.slots {
		s.slots[k] = slot{s: s, phase: k, next: first.Add(-time.Duration(k) * interval / phases)}
	}
	w.schedules[timeout] = s
	return s
}

// slotLocked picks the slot of s for a lease acquired at acquired, at
// now. A slot due no later than an interval after the acquire, give or
// take a tenth of one, is in time: the lease is first renewed about when
// it would be on its own, and a slot that has just gone out (due an
// interval from now, a round trip after the acquire was sent) is still
// in time for the leases acquired meanwhile. Among those, the slot being
// filled while it has room for a batch, else the fullest one with room,
// so that a few leases share one batch an interval, and once every slot
// is full the emptiest, so that the load spreads evenly over the
// interval. Ties go by phase in bit-reversed order (0, 8, 4, 12, 2, ...),
// so that the slots opened one after another are spread over the
// interval too, not side by side. So that a Start costs no scan of the
// slots each, once every slot is full the slot being filled passes on to
// the next one when that is no fuller: the slots take leases in turn.
// w.mu is held.
func (w *Watchdog) slotLocked(s *schedule, acquired, now time.Time) *slot {
	latest := acquired.Add(s.interval + s.interval/10)
	if f := s.filling; f != nil {
		w.catchUpLocked(f, now)
		if !f.next.After(latest) {
			if len(f.leases) < w.size {
				return f
			}
			g := &s.slots[(f.phase+1)%phases]
			if n := len(g.leases); s.full && n <= len(f.leases) && !g.next.After(latest) {
				s.filling = g
				return g
			}
		}
	}
	var pick *slot
	for k := range s.slots {
		sl := &s.slots[k]
		w.catchUpLocked(sl, now)
		if pick == nil || w.preferLocked(sl, pick, latest) {
			pick = sl
		}
	}
	s.filling, s.full = pick, len(pick.leases) >= w.size
	return pick
}

// catchUpLocked brings an empty slot, whose rounds went by unsent, to
// its next phase after now; w.mu is held.
func (w *Watchdog) catchUpLocked(sl *slot, now time.Time) {
	if len(sl.leases) == 0 {
		sl.next = catchUp(sl.next, now, sl.s.interval)
	}
}

// preferLocked reports whether a is a better slot than b for a lease
// for which a slot due no later than latest is in time (see slotLocked); w.mu is
// held.
func (w *Watchdog) preferLocked(a, b *slot, latest time.Time) bool {
	inA, inB := !a.next.After(latest), !b.next.After(latest)
	switch {
	case inA != inB:
		return inA
	case !inA:
		return a.next.Before(b.next)
	}
	na, nb := len(a.leases), len(b.leases)
	roomA, roomB := na < w.size, nb < w.size
	switch {
	case roomA != roomB:
		return roomA
	case roomA && na != nb:
		return na > nb
	case !roomA && na != nb:
		return na < nb
	}
	return bits.Reverse8(uint8(a.phase)) < bits.Reverse8(uint8(b.phase))
}

// catchUp returns next if it is after now, or else the first time after
// now that is next plus a whole number of intervals.
func catchUp(next, now time.Time, interval time.Duration) time.Time {
	if late := now.Sub(next); late >= 0 {
		next = next.Add((late/interval + 1) * interval)
	}
	return next
}

// marginLocked is the margin of leases of timeout: the watchdog's own
// for its timeout, and the same fraction of any other. A fixed margin
// would be a large part of a short lease, whose renewals then had little
// time to save it, or a sliver of a long one; in proportion, a lease of
// any timeout is renewed and reported lost as if the watchdog's timeout
// were its own. w.mu is held.
func (w *Watchdog) marginLocked(timeout time.Duration) time.Duration {
	if timeout == w.timeout {
		return w.margin
	}
	// margin < w.timeout/2, so the quotient fits: exact, with no overflow.
	hi, lo := bits.Mul64(uint64(w.margin), uint64(timeout))
	q, _ := bits.Div64(hi, lo, uint64(w.timeout))
	return time.Duration(q)
}

// dropLocked takes l out of the leases renewed, and its schedule with
// the last of its leases unless that is the watchdog's own timeout's.
// A client that holds one lock at a time would otherwise make the
// schedule anew on every acquire; kept, its slots keep their phases and
// cost nothing while empty. w.mu is held.
func (w *Watchdog) dropLocked(l *Lease) {
	sl := l.slot
	if _, ok := sl.leases[l]; !ok {
		return
	}
	delete(sl.leases, l)
	sl.s.full = false
	w.count--
	if sl.s.leases--; sl.s.leases == 0 && sl.s.timeout != w.timeout {
		delete(w.schedules, sl.s.timeout)
	}
}

// collectLocked forms the batches of leases due at now, each of at most
// the batch size (SetBatchSize): the leases of every slot due by now,
// then those of slots due within a tenth of their interval that fit in
// the last batch's room. A slot nearly due goes with one that is, a
// little early, rather than in a batch of its own when that costs no
// batch more: leases of the watchdog's timeout ride along with the
// batches of a shorter one. Each slot taken is next due an interval on,
// and is not due again until its batches are back (apply). A batch's
// cutoff is the shortest interval of its leases' schedules, so that a
// batch stuck on a dead connection holds back no renewal longer than its
// interval. w.mu is held.
func (w *Watchdog) collectLocked(now time.Time) []batch {
	var out []batch
	take := func(sl *slot) {
		for l := range sl.leases {
			out = w.appendLocked(out, l)
			b := &out[len(out)-1]
			if n := len(b.slots); n == 0 || b.slots[n-1] != sl {
				b.slots = append(b.slots, sl)
				sl.pending++
			}
		}
		// Like a time.Ticker, the slot skips the rounds it missed
		// rather than sending them late.
		sl.next = catchUp(sl.next.Add(sl.s.interval), now, sl.s.interval)
	}
	w.eachSlotLocked(func(sl *slot) {
		if !now.Before(sl.next) {
			take(sl)
		}
	})
	if len(out) == 0 {
		return nil
	}
	w.eachSlotLocked(func(sl *slot) {
		room := w.size - len(out[len(out)-1].leases)
		if len(sl.leases) <= room && !now.Add(sl.s.interval/10).Before(sl.next) {
			take(sl)
		}
	})
	return out
}

// appendLocked adds l to the last of batches, or to a new one when that
// is full, and returns batches. w.mu is held.
func (w *Watchdog) appendLocked(batches []batch, l *Lease) []batch {
	if n := len(batches); n == 0 || len(batches[n-1].leases) >= w.size {
		batches = append(batches, batch{})
	}
	b := &batches[len(batches)-1]
	b.leases = append(b.leases, l)
	if i := l.slot.s.interval; b.cutoff == 0 || i < b.cutoff {
		b.cutoff = i
	}
	return batches
}

// eachSlotLocked calls f with every slot that has leases and no batch
// out; w.mu is held.
func (w *Watchdog) eachSlotLocked(f func(*slot)) {
	for _, s := range w.schedules {
		for k := range s.slots {
			if sl := &s.slots[k]; len(sl.leases) > 0 && sl.pending == 0 {
				f(sl)
			}
		}
	}
}

// retryLocked has l's slot due again after its retry wait, when that
// comes before its next round: l's renewal failed at now. w.mu is held.
func (w *Watchdog) retryLocked(l *Lease, now time.Time) {
	sl := l.slot
	if at := now.Add(sl.s.retry); at.Before(sl.next) {
		sl.next = at
	}
}

// scanLocked reports the leases of sl whose deadline has come by now
// ended, and sets sl.earliest to the earliest deadline of the others.
// w.mu is held.
func (w *Watchdog) scanLocked(sl *slot, now time.Time, lost []*Lease) []*Lease {
	var earliest time.Time
	for l := range sl.leases {
		d := w.deadlineLocked(l)
		switch {
		case !now.Before(d):
			lost = append(lost, w.endLocked(l))
		case earliest.IsZero() || d.Before(earliest):
			earliest = d
		}
	}
	sl.earliest = earliest
	return lost
}

// untilNext returns the time until the next slot is due (ok false while
// none with leases is waiting) and until the earliest lease deadline, or
// idle when there is none sooner, and records when that is (armed) and
// when the next slot is due (ticking, zero for none).
func (w *Watchdog) untilNext(idle time.Duration) (round time.Duration, ok bool, expiry time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	expiry = idle
	for _, s := range w.schedules {
		for k := range s.slots {
			sl := &s.slots[k]
			if len(sl.leases) == 0 {
				continue
			}
			if d := sl.earliest.Sub(now); d < expiry {
				expiry = d
			}
			if sl.pending > 0 {
				continue
			}
			if d := sl.next.Sub(now); !ok || d < round {
				round, ok = d, true
			}
		}
	}
	w.armed = now.Add(expiry)
	w.ticking = time.Time{}
	if ok {
		w.ticking = now.Add(round)
	}
	return round, ok, expiry
}
