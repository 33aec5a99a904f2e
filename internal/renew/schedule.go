package renew

import (
	"math/bits"
	"time"
)

// A schedule is when the leases of one timeout are renewed: all of them in
// one round every third of it, so that a timeout costs a round an
// interval however many leases have it. The watchdog keeps one for each
// timeout its leases have, from the Start of the first lease of that
// timeout until the last ends, and the schedule of its own timeout from
// the first Start on; a round renews the leases of every schedule due
// (see collectLocked).
type schedule struct {
	// Set when the schedule is made, read-only after.
	timeout  time.Duration
	interval time.Duration // timeout/3
	retry    time.Duration // the wait after a failed renewal (retryLocked)

	// Guarded by Watchdog.mu.
	life   time.Duration // timeout less its margin: a lease's deadline is its renewed + life
	next   time.Time     // when its leases are due for renewal
	leases int           // how many leases in Watchdog.leases have it
	due    bool          // its leases are in the round being collected
}

// scheduleLocked returns the schedule of leases of timeout, made with a
// first round an interval after acquired if there is none yet, and
// reports whether it made it; w.mu is held.
func (w *Watchdog) scheduleLocked(timeout time.Duration, acquired time.Time) (*schedule, bool) {
	if s := w.schedules[timeout]; s != nil {
		return s, false
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
		next:  acquired.Add(interval),
	}
	w.schedules[timeout] = s
	return s, true
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
// schedule anew, and wake run to time it, on every acquire; kept, it
// costs run a wake-up an interval with nothing to renew, and a lease
// that joins it is first renewed at its next round, sooner than an
// interval after its acquire. w.mu is held.
func (w *Watchdog) dropLocked(l *Lease) {
	if _, ok := w.leases[l]; !ok {
		return
	}
	delete(w.leases, l)
	if l.s.leases--; l.s.leases == 0 && l.s.timeout != w.timeout {
		delete(w.schedules, l.s.timeout)
	}
}

// collectLocked picks the leases of the next round, sent at now: those of
// every schedule due by now, or within a tenth of its interval, and those
// Check asked for. A schedule nearly due goes with one that is, a little
// early, rather than in a round of its own: leases of the watchdog's
// timeout ride along with the rounds of a shorter one. Each schedule
// picked is next due an interval on, and no lease is due for a check any
// more. cutoff bounds the round: the shortest interval of any schedule,
// so that a round stuck on a dead connection holds back no lease's
// renewals longer than its interval. w.mu is held.
func (w *Watchdog) collectLocked(now time.Time) (leases []*Lease, cutoff time.Duration) {
	for _, s := range w.schedules {
		if cutoff == 0 || s.interval < cutoff {
			cutoff = s.interval
		}
		s.due = !now.Add(s.interval / 10).Before(s.next)
		if s.due {
			// Like a time.Ticker, the schedule skips the rounds it
			// missed rather than sending them late.
			s.next = s.next.Add(s.interval)
			if late := now.Sub(s.next); late >= 0 {
				s.next = s.next.Add((late/s.interval + 1) * s.interval)
			}
		}
	}
	for l := range w.leases {
		if l.s.due || l.due {
			leases = append(leases, l)
		}
	}
	for _, l := range w.due {
		l.due = false
	}
	w.due = nil
	return leases, cutoff
}

// retryLocked has l's schedule due again after its retry wait, when that
// comes before its next round: l's renewal failed at now. w.mu is held.
func (w *Watchdog) retryLocked(l *Lease, now time.Time) {
	if at := now.Add(l.s.retry); at.Before(l.s.next) {
		l.s.next = at
	}
}

// untilNext returns the time until the next round is due (ok false while
// there is no schedule) and until the earliest lease deadline, or idle
// when there is none sooner, and records when that is (armed).
func (w *Watchdog) untilNext(idle time.Duration) (round time.Duration, ok bool, expiry time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for _, s := range w.schedules {
		if d := s.next.Sub(now); !ok || d < round {
			round, ok = d, true
		}
	}
	expiry = idle
	for l := range w.leases {
		if d := w.deadlineLocked(l).Sub(now); d < expiry {
			expiry = d
		}
	}
	w.armed = now.Add(expiry)
	return round, ok, expiry
}
