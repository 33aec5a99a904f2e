package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// With SetLinger, a channel stays subscribed after its last waiter
// leaves; a waiter joins it with Live, at once and with no command sent,
// and hears what is published from then on; once idle for the linger,
// the channel is unsubscribed and Live finds nothing.
func TestLinger(t *testing.T) {
	h, _ := newHub(t, srv)
	const linger = 300 * time.Millisecond
	h.SetLinger(linger, 10)
	rdb := srv.Client(t)
	ch := redistest.Key(t)
	if s := h.Live(ch, hub.WakeOne, ""); s != nil {
		t.Fatal("Live found a channel never subscribed")
	}
	s := subscribe(t, h, ch)
	s.Close()
	left := time.Now()
	if n := numsub(t, rdb, ch); n != 1 {
		t.Fatalf("right after the last waiter left: PUBSUB NUMSUB = %d, want 1 (lingering)", n)
	}
	live := h.Live(ch, hub.WakeOne, "")
	if live == nil {
		t.Fatal("Live did not join a lingering channel")
	}
	publish(t, rdb, ch, "0")
	woken(t, live, "waiter that joined a lingering channel")
	live.Close()
	redistest.Eventually(t, wait, "lingering channel unsubscribed", func() bool { return numsub(t, rdb, ch) == 0 })
	if idle := time.Since(left); idle < linger {
		t.Fatalf("unsubscribed %v after the last waiter left, before the linger of %v", idle, linger)
	}
	if s := h.Live(ch, hub.WakeOne, ""); s != nil {
		t.Fatal("Live joined an unsubscribed channel")
	}
}

// Lingering channels are bounded: past the bound, the one left longest
// ago is unsubscribed first.
func TestLingerBound(t *testing.T) {
	h, _ := newHub(t, srv)
	h.SetLinger(time.Hour, 2)
	rdb := srv.Client(t)
	chans := []string{redistest.Key(t) + ":a", redistest.Key(t) + ":b", redistest.Key(t) + ":c"}
	for _, ch := range chans {
		subscribe(t, h, ch).Close()
	}
	redistest.Eventually(t, wait, "oldest idle channel unsubscribed", func() bool { return numsub(t, rdb, chans[0]) == 0 })
	for _, ch := range chans[1:] {
		if n := numsub(t, rdb, ch); n != 1 {
			t.Fatalf("%s: PUBSUB NUMSUB = %d, want 1 (among the newest lingering)", ch, n)
		}
	}
}

// A message "<tag>:<note>" hands the note to the first waiter with that
// tag and wakes the others with it (calls of one owner) without the note;
// waiters with other tags sleep on, and a message for a tag nobody has
// wakes nobody.
func TestTagged(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	ch := redistest.Key(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	subs := make([]*hub.Subscription, 4)
	for i, tag := range []string{"7", "8", "9", "8"} {
		s, err := h.Join(ctx, ch, hub.WakeOne, tag)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		subs[i] = s
	}
	publish(t, rdb, ch, "8:30000")
	woken(t, subs[1], "tagged waiter")
	if n := subs[1].Note(); n != "30000" {
		t.Fatalf("Note = %q, want 30000", n)
	}
	if n := subs[1].Note(); n != "" {
		t.Fatalf("second Note = %q, want it taken", n)
	}
	woken(t, subs[3], "second waiter with the tag")
	if n := subs[3].Note(); n != "" {
		t.Fatalf("second waiter with the tag: Note = %q, want none (the first has it)", n)
	}
	publish(t, rdb, ch, "5:1")
	barrier := redistest.Key(t)
	b := subscribe(t, h, barrier)
	publish(t, rdb, barrier, "1")
	woken(t, b, "barrier")
	for i, s := range subs {
		if pending(s) {
			t.Fatalf("waiter %d woken by a message for another tag", i)
		}
	}
}
