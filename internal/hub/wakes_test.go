package hub_test

import (
	"testing"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// On a latch's channel every message wakes every waiter with the message
// as its note, an opening ("0") kept over later messages, and changes the
// channel's wake stamp.
func TestLatchNotes(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	ch := layout.LatchChannel(redistest.Key(t))
	if _, live := h.Wakes(ch); live {
		t.Fatal("Wakes: live before any subscription")
	}
	a, b := subscribeAs(t, h, ch, hub.WakeAll), subscribeAs(t, h, ch, hub.WakeAll)
	// The listener tells when the hub has routed a message.
	heard := listenAs(t, h, ch, hub.WakeAll)
	s0, live := h.Wakes(ch)
	if !live {
		t.Fatal("Wakes: not live once subscribed")
	}

	publish(t, rdb, ch, "1")
	heard.next(t)
	woken(t, a, "a on the first message")
	woken(t, b, "b on the first message")
	if n := a.Note(); n != "1" {
		t.Fatalf("a's note = %q, want the message, 1", n)
	}
	s1, _ := h.Wakes(ch)
	if s1 == s0 {
		t.Fatal("a message left the wake stamp as it was")
	}

	// b has not looked at its note: an opening, then a new count, leave
	// it the opening.
	publish(t, rdb, ch, "0")
	publish(t, rdb, ch, "1")
	heard.next(t)
	heard.next(t)
	if n := b.Note(); n != "0" {
		t.Fatalf("b's note after an opening and a new count = %q, want 0", n)
	}
	if s, _ := h.Wakes(ch); s == s1 {
		t.Fatal("two messages left the wake stamp as it was")
	}
}

// A channel subscribed again never shows a wake stamp of its earlier
// subscription: a waiter cannot take what it knew then for current.
func TestWakeStampsNeverRepeat(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	ch := layout.LatchChannel(redistest.Key(t))
	seen := map[uint64]bool{}
	for range 3 {
		s := subscribeAs(t, h, ch, hub.WakeAll)
		stamp, live := h.Wakes(ch)
		if !live || seen[stamp] {
			t.Fatalf("Wakes = %d, %v; want live and a stamp not seen before (%v)", stamp, live, seen)
		}
		seen[stamp] = true
		publish(t, rdb, ch, "1")
		woken(t, s, "the message")
		stamp, _ = h.Wakes(ch)
		if seen[stamp] {
			t.Fatalf("the message left the stamp %d", stamp)
		}
		seen[stamp] = true
		s.Close()
		redistest.Eventually(t, wait, "unsubscribed", func() bool { return numsub(t, rdb, ch) == 0 })
	}
}
