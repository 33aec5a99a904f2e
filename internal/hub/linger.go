package hub

import (
	"slices"
	"time"
)

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

// leftLocked unsubscribes ch, whose last waiter has left and which has no
// listener, at once or, with SetLinger, once it has been idle long
// enough, first starting the sweeper if it does not run.
func (h *Hub) leftLocked(ch *channel) {
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

// reuseLocked takes ch, in use again, off the idle list if it lingers
// there.
func (h *Hub) reuseLocked(ch *channel) {
	if i := slices.Index(h.idle, ch); i >= 0 {
		h.idle = slices.Delete(h.idle, i, i+1)
	}
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
