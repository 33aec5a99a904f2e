package inspect

import (
	"fmt"
	"strings"

	"github.com/relock-go/relock/internal/layout"
)

// The problems of owners whose processes are gone, which Redis shows
// before any lease ends: a relock client listens on its own channel
// (layout.ClientChannel) from its first hold on, for as long as it
// lives, so a hold whose client listens there no longer is a hold
// nobody will release; and a fair queue nobody holds the lock of, whose
// waiters all listen on nothing, is left for its keys' TTL.
const (
	// GoneHolder: a relock holder whose client listens on nothing: not on
	// its own channel, relock_client:{<client id>}, nor as a waiter on
	// the lock's. Its process is gone (or cannot reach Redis for pub/sub),
	// and the lock frees only when its lease ends, or at a force-unlock.
	// Redisson's holders have no such channel and are not judged.
	GoneHolder Problem = "gone-holder"
	// OrphanedQueue: a fair lock's queue keys with nobody holding the
	// lock and every waiter in them gone (or none left): nothing moves
	// the queue until someone acquires, and the keys go at their TTL
	// (Lock.QueueTTL), or at a force-unlock.
	OrphanedQueue Problem = "orphaned-queue"
)

// unheard is a finding that holds when nobody listens on any of its
// channels.
type unheard struct {
	channels []string
	finding  Finding
}

// checkGone looks for l's gone holders and its orphaned queue; the
// findings wait for the listeners' count (doctor.listeners).
func (d *doctor) checkGone(l *Lock) {
	for _, h := range l.Holders {
		if h.Library != Relock {
			continue
		}
		d.unheard = append(d.unheard, unheard{
			channels: []string{layout.ClientChannel(h.ClientID), layout.LockClientChannel(l.Name, h.ClientID)},
			finding: Finding{Problem: GoneHolder, Name: l.Name, Kind: l.Kind, Owners: []string{h.Field}, TTL: l.TTL,
				Detail: fmt.Sprintf("%s holds %s, but its client listens on nothing (%s): its process is gone, or its pub/sub connection is down; the lock frees when its lease ends (%s left), or now with relock force-unlock %s (check relock inspect %s first)",
					h.Field, l.Name, layout.ClientChannel(h.ClientID), l.TTL, l.Name, l.Name)},
		})
	}
	if !l.Fair || len(l.Holders) > 0 {
		return
	}
	var channels, owners []string
	for _, q := range l.Queue {
		owners = append(owners, q.Field)
		switch q.Library {
		case Relock:
			channels = append(channels, layout.LockClientChannel(l.Name, q.ClientID))
		case Redisson:
			channels = append(channels, layout.FairWaiterChannel(l.Name, q.Field))
		}
	}
	if len(channels) < len(owners) {
		return // an entry of no known library: who knows whether it lives
	}
	d.unheard = append(d.unheard, unheard{channels: channels, finding: Finding{
		Problem: OrphanedQueue, Name: l.Name, Kind: l.Kind, Owners: owners, TTL: l.QueueTTL,
		Detail: fmt.Sprintf("the fair queue of %s (%s) has no lock and no waiter that listens: nothing moves it until someone acquires; its keys %s, or relock force-unlock %s removes them now",
			l.Name, entries(len(owners)), queueExpiry(l.QueueTTL), l.Name)}})
}

func entries(n int) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// queueExpiry says when queue keys with the TTL t go.
func queueExpiry(t TTL) string {
	switch t {
	case NoExpiry:
		return "never expire (only Redisson wrote them since they were made)"
	case NoKey:
		return "are gone"
	}
	return "expire in " + strings.TrimSpace(t.String()) + " (a second after the latest deadline in them)"
}
