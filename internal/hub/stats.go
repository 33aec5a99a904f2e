package hub

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
