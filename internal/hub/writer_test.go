package hub_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// While the hub's connection is slow to come back (its server accepts
// and answers only after a stall), waiters come and go without waiting
// for it: a new channel's subscription waits for the connection outside
// the hub's lock, so another waiter's Close returns at once. Once the
// connection is up, the new channel is subscribed and every channel
// hears its messages.
func TestSlowConnectDoesNotBlockHub(t *testing.T) {
	redistest.SkipShort(t, "its connection stalls for 3s")
	const stall = 3 * time.Second
	s, rdb := startServer(t)
	var slow atomic.Bool
	dialing := make(chan struct{}, 1)
	d := &net.Dialer{}
	sub := redis.NewClient(&redis.Options{
		Addr: s.Addr,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if slow.Load() {
				select {
				case dialing <- struct{}{}:
				default:
				}
				time.Sleep(stall)
			}
			return d.DialContext(ctx, network, addr)
		},
	})
	h := hub.New(sub, false, nil)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("hub Close: %v", err)
		}
		sub.Close()
	})
	a, b, c := redistest.Key(t), redistest.Key(t), redistest.Key(t)
	sa := subscribe(t, h, a)
	sb := subscribe(t, h, b)

	slow.Store(true)
	if n, err := rdb.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 client killed", n, err)
	}
	select {
	case <-dialing:
	case <-time.After(wait):
		t.Fatal("the hub did not reconnect")
	}
	slow.Store(false)
	subscribed := make(chan *hub.Subscription, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		sc, err := h.Subscribe(ctx, c, hub.WakeOne)
		if err != nil {
			t.Error(err)
		}
		subscribed <- sc
	}()
	time.Sleep(100 * time.Millisecond) // the new channel's subscription is queued
	start := time.Now()
	sb.Close()
	if took := time.Since(start); took > stall/2 {
		t.Fatalf("Close took %v while the connection stalled %v: it waited for the connection", took, stall)
	}
	sc := <-subscribed
	if sc == nil {
		t.FailNow()
	}
	defer sc.Close()
	redistest.Eventually(t, 2*wait, "both channels subscribed again", func() bool {
		return numsub(t, rdb, a) == 1 && numsub(t, rdb, c) == 1
	})
	settle(t, sa)
	for _, x := range []struct {
		ch string
		s  *hub.Subscription
	}{{a, sa}, {c, sc}} {
		if n := publish(t, rdb, x.ch, "1"); n != 1 {
			t.Fatalf("PUBLISH on %s reached %d connections, want 1", x.ch, n)
		}
		woken(t, x.s, "message after the slow reconnect")
	}
	if n := numsub(t, rdb, b); n != 0 {
		t.Fatalf("closed channel still has %d subscribers", n)
	}
}
