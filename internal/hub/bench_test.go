package hub_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// The hub's share of the wait loop, on the package's redis-server. Run
// with: go test -run '^$' -bench . ./internal/hub

// BenchmarkSubscribe is what a waiter pays to start and stop listening on
// a channel no other waiter of its client uses: SUBSCRIBE, the confirming
// PING, UNSUBSCRIBE.
func BenchmarkSubscribe(b *testing.B) {
	rdb := srv.NewClient()
	defer rdb.Close()
	h := hub.New(rdb, false, nil)
	defer h.Close()
	ctx := context.Background()
	prefix := redistest.Key(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		s, err := h.Subscribe(ctx, prefix+":"+strconv.Itoa(i), hub.WakeOne)
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkWake is a release reaching a waiter: PUBLISH "0" from another
// client until the subscription's wake-up arrives.
func BenchmarkWake(b *testing.B) {
	rdb, pub := srv.NewClient(), srv.NewClient()
	defer rdb.Close()
	defer pub.Close()
	h := hub.New(rdb, false, nil)
	defer h.Close()
	ctx := context.Background()
	channel := redistest.Key(b)
	s, err := h.Subscribe(ctx, channel, hub.WakeOne)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if err := pub.Publish(ctx, channel, "0").Err(); err != nil {
			b.Fatal(err)
		}
		select {
		case <-s.C():
		case <-time.After(5 * time.Second):
			b.Fatal("no wake-up within 5s")
		}
	}
}
