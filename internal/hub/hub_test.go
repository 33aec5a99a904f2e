package hub_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// Subscribe returns only once the server has the subscription: the server
// counts it and delivers a message published right after.
func TestSubscribeIsConfirmed(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	for i := range 20 {
		ch := redistest.Key(t)
		s := subscribe(t, h, ch)
		if n := numsub(t, rdb, ch); n != 1 {
			t.Fatalf("round %d: PUBSUB NUMSUB right after Subscribe = %d, want 1", i, n)
		}
		if n := publish(t, rdb, ch, "1"); n != 1 {
			t.Fatalf("round %d: PUBLISH right after Subscribe reached %d subscribers, want 1", i, n)
		}
		woken(t, s, "message published right after Subscribe")

		// A second waiter joins a live subscription: confirmed at once.
		s2 := subscribe(t, h, ch)
		if n := publish(t, rdb, ch, "1"); n != 1 {
			t.Fatalf("round %d: PUBLISH reached %d subscribers, want 1", i, n)
		}
		woken(t, s2, "second waiter")
		woken(t, s, "first waiter")
		s.Close()
		s2.Close()
	}
}

// "0" wakes exactly one waiter, the one woken least recently, so repeated
// "0"s go round the waiters in the order they subscribed.
func TestWakeOneRotates(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	ch := redistest.Key(t)
	const n = 5
	subs := make([]*hub.Subscription, n)
	for i := range subs {
		subs[i] = subscribe(t, h, ch)
	}
	for i := range 3 * n {
		publish(t, rdb, ch, "0")
		b.sync()
		var got []int
		for j, s := range subs {
			if pending(s) {
				got = append(got, j)
			}
		}
		if want := []int{i % n}; !slices.Equal(got, want) {
			t.Fatalf("message %d: woken waiters %v, want %v", i, got, want)
		}
	}
}

// A "0" skips a waiter that still holds an unconsumed wake-up, so two
// "0"s wake two waiters, not one waiter twice.
func TestWakeOneSkipsPendingWaiter(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	ch := redistest.Key(t)
	subs := []*hub.Subscription{subscribe(t, h, ch), subscribe(t, h, ch), subscribe(t, h, ch)}
	publish(t, rdb, ch, "0")
	publish(t, rdb, ch, "0")
	b.sync()
	got := 0
	for _, s := range subs {
		if pending(s) {
			got++
		}
	}
	if got != 2 {
		t.Fatalf("two \"0\" messages woke %d waiters, want 2", got)
	}
}

// Every payload other than "0" wakes every waiter on the channel, and only
// on that channel.
func TestWakeAll(t *testing.T) {
	for _, payload := range []string{"1", "2", "00", "", "hello"} {
		t.Run(fmt.Sprintf("%q", payload), func(t *testing.T) {
			h, _ := newHub(t, srv)
			rdb := srv.Client(t)
			b := newBarrier(t, h, rdb)
			ch, other := redistest.Key(t), redistest.Key(t)
			subs := []*hub.Subscription{subscribe(t, h, ch), subscribe(t, h, ch), subscribe(t, h, ch)}
			bystander := subscribe(t, h, other)
			publish(t, rdb, ch, payload)
			b.sync()
			for i, s := range subs {
				if !pending(s) {
					t.Errorf("waiter %d not woken by %q", i, payload)
				}
			}
			if pending(bystander) {
				t.Errorf("waiter on another channel woken by %q", payload)
			}
		})
	}
}

// On a semaphore's channel a count n wakes min(n, waiters) waiters (0:
// none, a non-number: all); on a count-down latch's every message wakes
// every waiter, "0" included.
func TestSynchronizerWakes(t *testing.T) {
	for _, tc := range []struct {
		wake    hub.Wake
		payload string
		want    int
	}{
		{hub.WakeCount, "0", 0},
		{hub.WakeCount, "2", 2},
		{hub.WakeCount, "7", 4},
		{hub.WakeCount, "x", 4},
		{hub.WakeAll, "0", 4},
		{hub.WakeAll, "1", 4},
	} {
		t.Run(tc.wake.String()+tc.payload, func(t *testing.T) {
			h, _ := newHub(t, srv)
			rdb := srv.Client(t)
			b := newBarrier(t, h, rdb)
			ch := redistest.Key(t)
			subs := make([]*hub.Subscription, 4)
			for i := range subs {
				subs[i] = subscribeAs(t, h, ch, tc.wake)
			}
			publish(t, rdb, ch, tc.payload)
			b.sync()
			got := 0
			for _, s := range subs {
				if pending(s) {
					got++
				}
			}
			if got != tc.want {
				t.Fatalf("%q on %s woke %d of 4 waiters, want %d", tc.payload, ch, got, tc.want)
			}
		})
	}
}

// Wake-ups are buffered one deep and never block the hub: a flood of
// messages to a waiter that does not read leaves it one wake-up, and the
// hub goes on delivering.
func TestWakeupsDoNotBlock(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	ch := redistest.Key(t)
	s := subscribe(t, h, ch)
	for range 200 {
		publish(t, rdb, ch, "1")
	}
	b.sync()
	if got := len(s.C()); got != 1 {
		t.Fatalf("buffered wake-ups = %d, want 1", got)
	}
	<-s.C()
	publish(t, rdb, ch, "0")
	woken(t, s, "message after the flood")
}

// Waiters on a channel share one server subscription; only the last Close
// unsubscribes.
func TestRefCounting(t *testing.T) {
	h, name := newHub(t, srv)
	rdb := srv.Client(t)
	ch := redistest.Key(t)
	const n = 10
	subs := make([]*hub.Subscription, n)
	for i := range subs {
		subs[i] = subscribe(t, h, ch)
		if got := numsub(t, rdb, ch); got != 1 {
			t.Fatalf("after %d waiters: PUBSUB NUMSUB = %d, want 1", i+1, got)
		}
	}
	if srv.Real() {
		if s := subscribers(t, rdb, name); len(s) != 1 || s[0]["sub"] != "1" {
			t.Fatalf("CLIENT LIST subscribers of the hub = %v, want one with sub=1", s)
		}
	}
	for _, s := range subs[:n-1] {
		s.Close()
	}
	if got := numsub(t, rdb, ch); got != 1 {
		t.Fatalf("one waiter left: PUBSUB NUMSUB = %d, want 1", got)
	}
	last := subs[n-1]
	publish(t, rdb, ch, "0")
	woken(t, last, "last waiter")
	last.Close()
	redistest.Eventually(t, wait, "last Close unsubscribes", func() bool { return numsub(t, rdb, ch) == 0 })
	chans, err := rdb.PubSubChannels(context.Background(), ch).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(chans) != 0 {
		t.Fatalf("PUBSUB CHANNELS %s = %v after the last Close, want none", ch, chans)
	}

	// The channel can be taken again.
	s := subscribe(t, h, ch)
	if got := numsub(t, rdb, ch); got != 1 {
		t.Fatalf("resubscribed: PUBSUB NUMSUB = %d, want 1", got)
	}
	publish(t, rdb, ch, "0")
	woken(t, s, "waiter on a resubscribed channel")
}

// Closing a subscription twice drops one waiter, not two.
func TestCloseIsIdempotent(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	ch := redistest.Key(t)
	a, c := subscribe(t, h, ch), subscribe(t, h, ch)
	a.Close()
	a.Close()
	a.Close()
	b.sync()
	if got := numsub(t, rdb, ch); got != 1 {
		t.Fatalf("PUBSUB NUMSUB = %d after closing one of two waiters three times, want 1", got)
	}
	publish(t, rdb, ch, "0")
	woken(t, c, "the remaining waiter")
	if pending(a) {
		t.Fatal("closed subscription woken")
	}
	c.Close()
	c.Close()
	redistest.Eventually(t, wait, "unsubscribed", func() bool { return numsub(t, rdb, ch) == 0 })
}

// A waiter that leaves with an unconsumed wake-one passes it to another
// waiter; one that leaves without one wakes nobody.
func TestClosePassesOnWakeOne(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	b := newBarrier(t, h, rdb)
	ch := redistest.Key(t)
	subs := []*hub.Subscription{subscribe(t, h, ch), subscribe(t, h, ch), subscribe(t, h, ch)}

	subs[2].Close() // holds nothing: must not wake anyone
	if pending(subs[0]) || pending(subs[1]) {
		t.Fatal("closing a waiter without a wake-up woke another")
	}

	publish(t, rdb, ch, "0")
	b.sync()
	if !pending(subs[0]) {
		t.Fatal("the first waiter did not get the wake-one")
	}
	// The next wake-one goes to subs[1], which leaves without consuming
	// it: it must reach subs[0].
	publish(t, rdb, ch, "0")
	b.sync()
	if len(subs[1].C()) != 1 {
		t.Fatal("the second waiter did not get the second wake-one")
	}
	subs[1].Close()
	select {
	case <-subs[0].C():
	default:
		t.Fatal("the wake-one held by a closing waiter was not passed on")
	}
}

// A flood of concurrent Subscribe and Close calls on a few channels, with
// messages flowing, leaves no subscription behind.
func TestConcurrentSubscribeAndClose(t *testing.T) {
	h, name := newHub(t, srv)
	rdb := srv.Client(t)
	chans := make([]string, 5)
	for i := range chans {
		chans[i] = redistest.Key(t)
	}
	stop := make(chan struct{})
	var pub sync.WaitGroup
	pub.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = rdb.Publish(context.Background(), chans[i%len(chans)], []string{"0", "1"}[i%2]).Err()
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for g := range 50 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 40 {
				ch := chans[r.IntN(len(chans))]
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				s, err := h.Subscribe(ctx, ch, hub.WakeOne)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				if r.IntN(2) == 0 {
					select {
					case <-s.C():
					case <-time.After(time.Millisecond):
					}
				}
				s.Close()
			}
		})
	}
	wg.Wait()
	close(stop)
	pub.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Subscribe: %v", err)
	}
	redistest.Eventually(t, wait, "every channel unsubscribed", func() bool {
		n, err := rdb.PubSubNumSub(context.Background(), chans...).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range n {
			if c != 0 {
				return false
			}
		}
		return true
	})
	if h.Connections() != 1 {
		t.Fatalf("Connections() = %d, want 1", h.Connections())
	}
	if srv.Real() {
		redistest.Eventually(t, wait, "the hub connection holds no subscription", func() bool {
			return len(subscribers(t, rdb, name)) == 0
		})
	}
}

// A context that has already ended makes Subscribe fail with its error,
// whether the channel is new or already subscribed, and leaves nothing
// subscribed.
func TestSubscribeEndedContext(t *testing.T) {
	h, _ := newHub(t, srv)
	rdb := srv.Client(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	ctxs := []struct {
		ctx  context.Context
		want error
	}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}}

	t.Run("new channel", func(t *testing.T) {
		ch := redistest.Key(t)
		for i := range 20 {
			c := ctxs[i%2]
			if s, err := h.Subscribe(c.ctx, ch, hub.WakeOne); !errors.Is(err, c.want) || s != nil {
				t.Fatalf("try %d: Subscribe = %v, %v; want nil, %v", i, s, err, c.want)
			}
		}
		redistest.Eventually(t, wait, "nothing left subscribed", func() bool { return numsub(t, rdb, ch) == 0 })
	})

	// The subscription is already confirmed, so only an early check of
	// ctx can make the outcome certain.
	t.Run("subscribed channel", func(t *testing.T) {
		ch := redistest.Key(t)
		w := subscribe(t, h, ch)
		for i := range 20 {
			c := ctxs[i%2]
			if s, err := h.Subscribe(c.ctx, ch, hub.WakeOne); !errors.Is(err, c.want) || s != nil {
				if s != nil {
					s.Close()
				}
				t.Fatalf("try %d: Subscribe = %v, %v; want nil, %v", i, s, err, c.want)
			}
		}
		if got := numsub(t, rdb, ch); got != 1 {
			t.Fatalf("PUBSUB NUMSUB = %d, want 1", got)
		}
		publish(t, rdb, ch, "0")
		woken(t, w, "waiter beside the failed Subscribes")
	})
}

// After Close: Done is closed, Subscribe fails with ErrClosed, Close again
// is harmless, subscriptions may still be closed, the server sees the
// connection go, and no goroutine is left.
func TestHubClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// Both clients close before the leak check: on the miniredis
	// fallback, their connections have server goroutines in this process.
	rdb := srv.NewClient()
	defer rdb.Close()
	const name = "relock-hub-close"
	hrdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ClientName: name})
	defer hrdb.Close()
	h := hub.New(hrdb, false, nil)
	select {
	case <-h.Done():
		t.Fatal("Done closed before Close")
	default:
	}
	if got := h.Connections(); got != 0 {
		t.Fatalf("Connections() before any Subscribe = %d, want 0", got)
	}
	ch := redistest.Key(t)
	s := subscribe(t, h, ch)
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-h.Done():
	default:
		t.Fatal("Done not closed after Close")
	}
	if err := h.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := h.Subscribe(context.Background(), ch, hub.WakeOne); !errors.Is(err, hub.ErrClosed) {
		t.Fatalf("Subscribe after Close = %v, want ErrClosed", err)
	}
	if _, err := h.Subscribe(context.Background(), redistest.Key(t), hub.WakeOne); !errors.Is(err, hub.ErrClosed) {
		t.Fatalf("Subscribe of a new channel after Close = %v, want ErrClosed", err)
	}
	s.Close()
	s.Close()
	redistest.Eventually(t, wait, "the server drops the subscription", func() bool { return numsub(t, rdb, ch) == 0 })
	if srv.Real() {
		redistest.Eventually(t, wait, "the server drops the connection", func() bool {
			for _, c := range clientList(t, rdb) {
				if c["name"] == name {
					return false
				}
			}
			return true
		})
	}
}
