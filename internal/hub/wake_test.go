package hub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// panics returns the panic of f, "" when it returns.
func panics(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg, _ = r.(string)
			if msg == "" {
				msg = "a panic that is not a string"
			}
		}
	}()
	f()
	return ""
}

// A channel's first subscriber fixes its wake policy: a later one that
// states another, with any of Subscribe, Join, Live and Listen, panics,
// and the hub goes on as before, the channel keeping its subscribers and
// its policy. So does one that states the zero Wake. Once the channel is
// unsubscribed, its next first subscriber states a policy anew.
func TestWakeConflict(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	ctx := context.Background()
	ch := redistest.Key(t)
	first, second := subscribeAs(t, h, ch, hub.WakeCount), subscribeAs(t, h, ch, hub.WakeCount)
	tell := func(string) {}

	for _, w := range []hub.Wake{hub.WakeOne, hub.WakeAll, hub.WakeTagged(ch), hub.Wake{}} {
		for what, f := range map[string]func(){
			"Subscribe": func() { _, _ = h.Subscribe(ctx, ch, w) },
			"Join":      func() { _, _ = h.Join(ctx, ch, w, "7") },
			"Live":      func() { h.Live(ch, w, "") },
			"Listen":    func() { _ = h.Listen(ctx, ch, w, tell) },
		} {
			msg := panics(f)
			want := "subscribed with " + w.String() + ", but it has WakeCount"
			if w == (hub.Wake{}) {
				want = "no wake policy"
			}
			if !strings.Contains(msg, want) {
				t.Fatalf("%s with %v on a WakeCount channel: panic %q, want one saying %q", what, w, msg, want)
			}
		}
	}
	// The hub is unharmed: no waiter or listener was added, its lock is
	// free, and the channel wakes as WakeCount says.
	if waiters, _ := h.Stats(); waiters != 3 { // first, second and the barrier's
		t.Fatalf("waiters after the refused subscriptions = %d, want 3", waiters)
	}
	publish(t, rdb, ch, "1")
	b.sync()
	if n := btoi(pending(first)) + btoi(pending(second)); n != 1 {
		t.Fatalf(`"1" on a WakeCount channel woke %d of 2 waiters, want 1`, n)
	}
	if s := h.Live(ch, hub.WakeCount, ""); s == nil {
		t.Fatal("Live with the channel's own policy refused")
	} else {
		s.Close()
	}

	// WakeTagged policies differ by their shared channel.
	tagged := redistest.Key(t) + ":tagged"
	subscribeAs(t, h, tagged, hub.WakeTagged("a"))
	if msg := panics(func() { _, _ = h.Subscribe(ctx, tagged, hub.WakeTagged("b")) }); !strings.Contains(msg, `WakeTagged("b"), but it has WakeTagged("a")`) {
		t.Fatalf("WakeTagged with another shared channel: panic %q", msg)
	}

	// Unsubscribed (no linger), the channel takes a new policy.
	first.Close()
	second.Close()
	redistest.Eventually(t, wait, "unsubscribed", func() bool { return numsub(t, rdb, ch) == 0 })
	s := subscribeAs(t, h, ch, hub.WakeOne)
	other := subscribeAs(t, h, ch, hub.WakeOne)
	publish(t, rdb, ch, "1") // wakes every waiter under WakeOne
	woken(t, s, "the first waiter under the new policy")
	woken(t, other, "the second waiter under the new policy")
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
