package hub_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A listener records the payloads it is told; it never blocks.
type listener chan string

func newListener() listener { return make(listener, 100) }

func (l listener) tell(payload string) {
	select {
	case l <- payload:
	default:
	}
}

// next returns the next payload, failing the test if none comes within
// wait.
func (l listener) next(t *testing.T) string {
	t.Helper()
	select {
	case p := <-l:
		return p
	case <-time.After(wait):
		t.Fatalf("no message within %v", wait)
		return ""
	}
}

func listen(t *testing.T, h *hub.Hub, channel string) listener {
	t.Helper()
	return listenAs(t, h, channel, hub.WakeOne)
}

// listenAs is listen for a channel with wake policy wake.
func listenAs(t *testing.T, h *hub.Hub, channel string, wake hub.Wake) listener {
	t.Helper()
	l := newListener()
	if err := h.Listen(context.Background(), channel, wake, l.tell); err != nil {
		t.Fatalf("Listen(%q): %v", channel, err)
	}
	return l
}

// Every listener is told every message, in order, none merged: a burst
// of messages, which would leave a waiter one wake-up, reaches each
// listener whole; waiters on the channel are woken as usual.
func TestListen(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	ch := redistest.Key(t)
	a, b := listen(t, h, ch), listen(t, h, ch)
	redistest.Eventually(t, wait, "subscribed", func() bool { return numsub(t, rdb, ch) == 1 })
	w := subscribe(t, h, ch)
	const n = 20
	for i := range n {
		publish(t, rdb, ch, strconv.Itoa(i))
	}
	for i := range n {
		want := strconv.Itoa(i)
		if got := a.next(t); got != want {
			t.Fatalf("first listener told %q, want %q", got, want)
		}
		if got := b.next(t); got != want {
			t.Fatalf("second listener told %q, want %q", got, want)
		}
	}
	woken(t, w, "waiter on a listened channel")

	// The last waiter's leaving keeps the channel: it has listeners.
	w.Close()
	publish(t, rdb, ch, "after")
	if got := a.next(t); got != "after" {
		t.Fatalf("listener told %q after the waiter left, want %q", got, "after")
	}
	if got := numsub(t, rdb, ch); got != 1 {
		t.Fatalf("PUBSUB NUMSUB = %d after the waiter left, want 1", got)
	}
}

// Listen returns before the server confirms the subscription: a listener
// on a hub whose server does not answer is registered at once, and hears
// messages once the server answers.
func TestListenDoesNotWait(t *testing.T) {
	s, rdb := startServer(t)
	h, _ := newHub(t, s)
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	ch := redistest.Key(t)
	start := time.Now()
	l := listen(t, h, ch)
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Fatalf("Listen took %v with the server paused, want it not to wait", d)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*wait, "subscribed", func() bool { return numsub(t, rdb, ch) == 1 })
	publish(t, rdb, ch, "x")
	if got := l.next(t); got != "x" {
		t.Fatalf("told %q, want x", got)
	}
}

// After the subscription connection is killed, the hub resubscribes the
// listened channel and the listener hears messages again.
func TestListenAfterReconnect(t *testing.T) {
	s, rdb := startServer(t)
	h, _ := newHub(t, s)
	ch := redistest.Key(t)
	l := listen(t, h, ch)
	redistest.Eventually(t, wait, "subscribed", func() bool { return numsub(t, rdb, ch) == 1 })
	if n, err := rdb.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 client killed", n, err)
	}
	// Messages published while the hub reconnects are lost (a count of
	// one receiver may be a connection about to be replaced): publish
	// until one is heard.
	redistest.Eventually(t, 2*wait, "a message heard after the reconnect", func() bool {
		publish(t, rdb, ch, "again")
		select {
		case got := <-l:
			if got != "again" {
				t.Fatalf("told %q after the reconnect, want %q", got, "again")
			}
			return true
		case <-time.After(20 * time.Millisecond):
			return false
		}
	})
}

// Listen fails on a closed hub and with an ended context.
func TestListenErrors(t *testing.T) {
	h, _ := newHub(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Listen(ctx, redistest.Key(t), hub.WakeOne, newListener().tell); !errors.Is(err, context.Canceled) {
		t.Fatalf("Listen with an ended context = %v, want context.Canceled", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.Listen(context.Background(), redistest.Key(t), hub.WakeOne, newListener().tell); !errors.Is(err, hub.ErrClosed) {
		t.Fatalf("Listen on a closed hub = %v, want ErrClosed", err)
	}
}
