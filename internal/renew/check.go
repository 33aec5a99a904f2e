package renew

import "time"

// Check has the watchdog renew the lease now, in a batch of its own
// ahead of any batch waiting to go (at once, or as soon as a batch out
// is back when as many as may be are out), rather than at its next
// interval: someone says the lock may be gone, a hint the renewal
// settles. If the renewal finds the lock gone, lost is called with
// reason gone rather than ErrGone; if it finds it held, nothing changes,
// as the hint was stale (the lock taken again since, say). Any renewal
// that finds the lock gone before one sent after Check has found it held
// reports gone too.
//
// Check does not block: it may be called from a goroutine that must not,
// such as a pub/sub delivery. It does nothing on a lease that has ended.
func (l *Lease) Check(gone error) {
	w := l.w
	w.mu.Lock()
	if l.ended {
		w.mu.Unlock()
		return
	}
	l.gone, l.checked = gone, time.Now()
	if !l.due {
		l.due = true
		w.due = append(w.due, l)
	}
	w.mu.Unlock()
	select {
	case w.checks <- struct{}{}:
	default:
		// run has a check to start already, which takes every due lease.
	}
}

// checkedLocked forms the batches of the leases Check asked to renew,
// ended ones left out, and clears the list. w.mu is held.
func (w *Watchdog) checkedLocked() []batch {
	var out []batch
	for _, l := range w.due {
		l.due = false
		if !l.ended {
			out = w.appendLocked(out, l)
		}
	}
	w.due = nil
	return out
}
