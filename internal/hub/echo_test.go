package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// publishPair publishes first on one channel and then on another from one
// script, as relock's semaphore scripts do: the server delivers the two
// to a connection in a row.
var publishPair = redis.NewScript(`
redis.call('publish', KEYS[1], ARGV[1])
redis.call('publish', KEYS[2], ARGV[2])`)

// On a relock client's channel for a semaphore's waiters, "<tag>:<note>"
// wakes the waiter tagged tag alone, with its note, and an echo mark
// "=<count>" wakes nobody, nor does the message right after it when that
// is count on the semaphore's shared channel; any other message there
// wakes the watcher as ever.
func TestEchoMarks(t *testing.T) {
	// A name in braces, and one that carries its own hash tag.
	for what, form := range map[string]string{"braces": "{%s}", "own tag": "a:{%s}:b"} {
		t.Run(what, func(t *testing.T) { echoMarks(t, fmt.Sprintf(form, redistest.Key(t))) })
	}
}

func echoMarks(t *testing.T, name string) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	shared := layout.SemaphoreChannel(name)
	own := layout.SemaphoreClientChannel(name, "6f1e43c2-0a8e-4d6b-9d0e-3c1f2a7b9e11")
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	tagged := map[string]*hub.Subscription{}
	for _, tag := range []string{"7", "8"} {
		s, err := h.Join(ctx, own, hub.WakeTagged(shared), tag)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		tagged[tag] = s
	}
	watcher := subscribeAs(t, h, shared, hub.WakeCount)
	otherShared := layout.SemaphoreChannel(redistest.Key(t) + ":other")
	other := subscribeAs(t, h, otherShared, hub.WakeCount)
	// A plain channel on the same connection, for a message between a
	// mark and a count (the barrier's own would race its sync).
	gap := "gap:" + redistest.Key(t)
	subscribe(t, h, gap)

	for _, tc := range []struct {
		what    string
		publish func()
		watcher bool // woken
	}{
		{"an echo mark and its count", func() {
			publishPair.Run(ctx, rdb, []string{own, shared}, "=3", "3")
		}, false},
		{"a count alone (a Redisson release)", func() { publish(t, rdb, shared, "3") }, true},
		{"an echo mark and another count", func() {
			publishPair.Run(ctx, rdb, []string{own, shared}, "=3", "2")
		}, true},
		{"an echo mark, then a count in another script", func() {
			publish(t, rdb, own, "=1")
			publish(t, rdb, gap, "1")
			publish(t, rdb, shared, "1")
		}, true},
		{"a count of 0", func() { publish(t, rdb, shared, "0") }, false},
	} {
		tc.publish()
		b.sync()
		if got := pending(watcher); got != tc.watcher {
			t.Fatalf("%s: watcher woken %v, want %v", tc.what, got, tc.watcher)
		}
		for tag, s := range tagged {
			if pending(s) {
				t.Fatalf("%s: waiter %s woken", tc.what, tag)
			}
		}
	}
	// The mark is for its own semaphore's channel only.
	publishPair.Run(ctx, rdb, []string{own, otherShared}, "=1", "1")
	b.sync()
	if !pending(other) {
		t.Fatal("an echo mark for one semaphore kept a count on another from waking its watcher")
	}

	publish(t, rdb, own, "8:0")
	b.sync()
	if !pending(tagged["8"]) || pending(tagged["7"]) || pending(watcher) {
		t.Fatal(`"8:0" did not wake the waiter tagged 8 alone`)
	}
	if n := tagged["8"].Note(); n != "0" {
		t.Fatalf("note = %q, want 0", n)
	}
}

// A semaphore's shared channel lingers as a waiters' channel does: the
// watcher's role moves from waiter to waiter, and a client that held it
// lately keeps listening, so that taking it again costs no SUBSCRIBE.
// (relock's releases publish there only what their grants leave.)
func TestSharedChannelLingers(t *testing.T) {
	h, _ := newHub(t, srv)
	h.SetLinger(time.Hour, 10)
	rdb := srv.Client(t)
	name := "{" + redistest.Key(t) + "}"
	shared, own := layout.SemaphoreChannel(name), layout.SemaphoreClientChannel(name, "6f1e43c2-0a8e-4d6b-9d0e-3c1f2a7b9e11")
	subscribeAs(t, h, shared, hub.WakeCount).Close()
	subscribeAs(t, h, own, hub.WakeTagged(shared)).Close()
	for _, ch := range []string{shared, own} {
		if n := numsub(t, rdb, ch); n != 1 {
			t.Fatalf("%s: PUBSUB NUMSUB = %d, want 1 (lingering)", ch, n)
		}
	}
	s := h.Live(shared, hub.WakeCount, "")
	if s == nil {
		t.Fatal("Live did not join the lingering shared channel")
	}
	s.Close()
}
