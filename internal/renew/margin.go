package renew

import (
	"fmt"
	"time"
)

// SetMargin sets watchdog.Options.Margin (relock's Options.LeaseMargin,
// explained in docs/guarantees.md) for every lease from then on.
func (w *Watchdog) SetMargin(d time.Duration) error {
	if d < 0 || d >= w.timeout/2 {
		return fmt.Errorf("watchdog: margin %v not in [0, %v)", d, w.timeout/2)
	}
	w.mu.Lock()
	w.margin = d
	for _, s := range w.schedules {
		s.life = s.timeout - w.marginLocked(s.timeout)
		for k := range s.slots {
			// A wider margin brings deadlines sooner: have expire
			// scan every slot.
			s.slots[k].earliest = time.Time{}
		}
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
	return l.renewed.Add(l.slot.s.life)
}
