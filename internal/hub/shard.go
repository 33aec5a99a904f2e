package hub

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// rehomeWait bounds how long a move waits for the cluster layout to name
// a channel's new owner.
const rehomeWait = 2 * time.Second

// rehome moves channels of the sharded link l to the masters that now own
// their slots: the named ones, which the server dropped (their slot moved
// away), or, when names is nil, all of l's (l broke: its master may have
// failed over). It runs on l's serve goroutine. Moved channels are
// subscribed on their new master's link and their waiters woken twice:
// at once, and again when the new subscription is confirmed, since a
// release during the move may have gone unheard. A dropped channel whose
// owner the layout does not show as changed is subscribed on l again.
// rehome reports whether l should go on; a broken link left with no
// channels is closed and dropped instead.
func (h *Hub) rehome(l *link, names []string) bool {
	dropped := names != nil
	if !dropped {
		names = h.channelsOf(l)
	}
	wait := rehomeWait
	if !dropped {
		// The link broke: its master may be down for good or back in a
		// moment; look briefly, and look again at the next break.
		wait = shardHealthInterval
	}
	owners := h.owners(l, names, wait)

	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	left := 0
	for _, name := range names {
		ch := h.channels[name]
		if ch == nil || ch.link != l {
			continue
		}
		node := owners[name]
		switch {
		case node != nil && node.Options().Addr != l.addr:
			ch.rehomed = true
			h.attachLocked(ch, h.shardLinkLocked(node.Options().Addr, node))
			ch.wakeAllLocked()
		case dropped:
			h.attachLocked(ch, l)
			ch.wakeAllLocked()
			left++
		default:
			left++
		}
	}
	if !dropped && left == 0 && len(h.channelsOfLocked(l)) == 0 {
		delete(h.links, l.addr)
		_ = l.close()
		return false
	}
	return true
}

// owners asks the cluster layout for the masters of names, reloading it
// until it names another master than l's for at least one of them, or
// wait passes: the layout is refreshed in the background, and a failover
// may still be under way.
func (h *Hub) owners(l *link, names []string, wait time.Duration) map[string]*redis.Client {
	cc := h.rdb.(*redis.ClusterClient)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	owners := make(map[string]*redis.Client, len(names))
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		cc.ReloadState(ctx)
		moved := false
		for _, name := range names {
			if node, err := cc.MasterForKey(ctx, name); err == nil {
				owners[name] = node
				moved = moved || node.Options().Addr != l.addr
			}
		}
		if moved || len(names) == 0 {
			return owners
		}
		select {
		case <-ctx.Done():
			return owners
		case <-h.stop:
			return owners
		case <-tick.C:
		}
	}
}

// channelsOf lists the channels subscribed on l.
func (h *Hub) channelsOf(l *link) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.channelsOfLocked(l)
}

func (h *Hub) channelsOfLocked(l *link) []string {
	var names []string
	for name, ch := range h.channels {
		if ch.link == l {
			names = append(names, name)
		}
	}
	return names
}
