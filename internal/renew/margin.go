package renew

import (
	"fmt"
	"time"
)

// SetMargin sets how long before the latest safe instant (the send time
// of the last successful renewal plus the timeout) a lease that no
// renewal reached is reported lost, for every lease from then on. The
// margin is what the holder has left to notice the loss and stop; it
// also absorbs the delay of the watchdog's timer and goroutines on a
// loaded machine, which does not shrink with the timeout. The default,
// a tenth of the timeout, is 3 s of Redisson's 30 s; clock drift between
// client and server needs far less (see the relock package's
// Options.LeaseMargin). d must be at least 0 and below half the timeout:
// renewals go out every third of it, and a larger margin would report
// leases lost before a renewal, or its retries, could save them. A
// lease with a timeout of its own (Renewal.Timeout) gets the same
// fraction of that timeout, which keeps it in the same range.
func (w *Watchdog) SetMargin(d time.Duration) error {
	if d < 0 || d >= w.timeout/2 {
		return fmt.Errorf("watchdog: margin %v not in [0, %v)", d, w.timeout/2)
	}
	w.mu.Lock()
	w.margin = d
	for _, s := range w.schedules {
		s.life = s.timeout - w.marginLocked(s.timeout)
	}
	w.mu.Unlock()
	w.wake()
	return nil
}

// wake has run set its expiry timer again.
func (w *Watchdog) wake() {
	select {
	case w.rearm <- struct{}{}:
	default:
		// run is to set it already.
	}
}

// deadlineLocked is when l is reported lost unless a renewal succeeds
// first; w.mu is held.
func (w *Watchdog) deadlineLocked(l *Lease) time.Time {
	return l.renewed.Add(l.s.life)
}
