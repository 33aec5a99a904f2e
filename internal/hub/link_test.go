package hub_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// One hub holds one subscription connection however many waiters and
// channels it serves.
func TestOneConnection(t *testing.T) {
	srv.RequireReal(t)
	h, name := newHub(t, srv)
	rdb := srv.Client(t)
	const waiters, channels = 500, 50
	chans := make([]string, channels)
	for i := range chans {
		chans[i] = redistest.Key(t)
	}
	subs := make([]*hub.Subscription, waiters)
	errs := make([]error, waiters)
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			subs[i], errs[i] = h.Subscribe(ctx, chans[i%channels], hub.WakeOne)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Subscribe %d: %v", i, err)
		}
		t.Cleanup(subs[i].Close)
	}

	var named []clientInfo
	for _, c := range clientList(t, rdb) {
		if c["name"] == name {
			named = append(named, c)
		}
	}
	if len(named) != 1 || named[0]["sub"] != strconv.Itoa(channels) {
		t.Fatalf("server connections of the hub = %v, want one with sub=%d", named, channels)
	}
	if got := h.Connections(); got != 1 {
		t.Fatalf("Connections() = %d, want 1", got)
	}
	for _, ch := range chans {
		if n := publish(t, rdb, ch, "1"); n != 1 {
			t.Fatalf("PUBLISH %s reached %d connections, want 1", ch, n)
		}
	}
	for i, s := range subs {
		woken(t, s, "waiter "+strconv.Itoa(i))
	}

	for _, s := range subs {
		s.Close()
	}
	redistest.Eventually(t, wait, "every channel unsubscribed", func() bool {
		s := subscribers(t, rdb, name)
		return len(s) == 0
	})
	if got := h.Connections(); got != 1 {
		t.Fatalf("Connections() after every waiter left = %d, want 1 (the hub keeps its connection)", got)
	}
}

// startServer starts a server of the test's own, for tests that kill,
// restart or pause it.
func startServer(t *testing.T) (*redistest.Server, *redis.Client) {
	t.Helper()
	s := redistest.Start(t)
	s.RequireReal(t)
	t.Cleanup(func() { _ = s.Resume() })
	return s, s.Client(t)
}

// settle consumes wake-ups until none has come for a while, so that a
// later wake-up is known to come from a later message.
func settle(t *testing.T, subs ...*hub.Subscription) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for quiet := 0; quiet < 30; {
		if time.Now().After(deadline) {
			t.Fatalf("wake-ups did not stop within %v", wait)
		}
		any := false
		for _, s := range subs {
			any = pending(s) || any
		}
		if any {
			quiet = 0
		} else {
			quiet++
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// oneSubscriber returns the CLIENT LIST entry of the hub's subscription
// connection, failing unless there is exactly one.
func oneSubscriber(t *testing.T, rdb *redis.Client, name string) clientInfo {
	t.Helper()
	s := subscribers(t, rdb, name)
	if len(s) != 1 {
		t.Fatalf("hub subscription connections on the server: %v, want exactly one", s)
	}
	return s[0]
}

// When the server dies, waiters are woken (messages may be lost); when it
// comes back, the hub resubscribes on one connection and messages flow
// again.
func TestReconnectAfterRestart(t *testing.T) {
	redistest.Parallel(t)
	s, rdb := startServer(t)
	h, name := newHub(t, s)
	ch := redistest.Key(t)
	a, b := subscribe(t, h, ch), subscribe(t, h, ch)
	if pending(a) || pending(b) {
		t.Fatal("woken before any message")
	}

	s.Kill()
	woken(t, a, "server killed")
	woken(t, b, "server killed")

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*wait, "resubscribed after restart", func() bool {
		n, err := rdb.PubSubNumSub(context.Background(), ch).Result()
		return err == nil && n[ch] == 1
	})
	settle(t, a, b)
	if n := publish(t, rdb, ch, "1"); n != 1 {
		t.Fatalf("PUBLISH after restart reached %d connections, want 1", n)
	}
	woken(t, a, "message after restart")
	woken(t, b, "message after restart")
	oneSubscriber(t, rdb, name)
	if got := h.Connections(); got != 1 {
		t.Fatalf("Connections() = %d, want 1", got)
	}
}

// A Subscribe while the server is down returns (the subscription is
// pending on the broken connection) and takes effect once it is back.
func TestSubscribeWhileServerDown(t *testing.T) {
	redistest.Parallel(t)
	s, rdb := startServer(t)
	h, name := newHub(t, s)
	before := redistest.Key(t)
	a := subscribe(t, h, before)
	s.Kill()
	woken(t, a, "server killed")

	during := redistest.Key(t)
	start := time.Now()
	b := subscribe(t, h, during)
	if d := time.Since(start); d > wait {
		t.Fatalf("Subscribe with the server down took %v", d)
	}

	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 2*wait, "both channels resubscribed", func() bool {
		n, err := rdb.PubSubNumSub(context.Background(), before, during).Result()
		return err == nil && n[before] == 1 && n[during] == 1
	})
	settle(t, a, b)
	publish(t, rdb, before, "0")
	publish(t, rdb, during, "0")
	woken(t, a, "message on the channel subscribed before the outage")
	woken(t, b, "message on the channel subscribed during the outage")
	if got := oneSubscriber(t, rdb, name)["sub"]; got != "2" {
		t.Fatalf("hub connection has sub=%s, want 2", got)
	}
}

// When the server closes the subscription connection (CLIENT KILL), the
// hub wakes its waiters and resubscribes on a new connection.
func TestReconnectAfterClientKill(t *testing.T) {
	redistest.Parallel(t)
	s, rdb := startServer(t)
	h, name := newHub(t, s)
	ch := redistest.Key(t)
	a := subscribe(t, h, ch)
	old := oneSubscriber(t, rdb, name)

	n, err := rdb.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Result()
	if err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 client killed", n, err)
	}
	woken(t, a, "subscription connection killed")
	redistest.Eventually(t, 2*wait, "resubscribed on a new connection", func() bool {
		s := subscribers(t, rdb, name)
		return len(s) == 1 && s[0]["id"] != old["id"] && s[0]["sub"] == "1"
	})
	settle(t, a)
	if n := publish(t, rdb, ch, "0"); n != 1 {
		t.Fatalf("PUBLISH after reconnect reached %d connections, want 1", n)
	}
	woken(t, a, "message after reconnect")
	if got := h.Connections(); got != 1 {
		t.Fatalf("Connections() = %d, want 1", got)
	}
}

// A Subscribe waiting for the server's confirmation gives up when its
// context ends and leaves nothing subscribed once the server answers.
func TestSubscribeContextEndsWhileWaiting(t *testing.T) {
	redistest.Parallel(t)
	s, rdb := startServer(t)
	h, _ := newHub(t, s)
	live := redistest.Key(t)
	a := subscribe(t, h, live) // the connection is up

	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	ch := redistest.Key(t)
	const d = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	sub, err := h.Subscribe(ctx, ch, hub.WakeOne)
	elapsed := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) || sub != nil {
		t.Fatalf("Subscribe on a frozen server = %v, %v; want nil, context.DeadlineExceeded", sub, err)
	}
	if elapsed < d {
		t.Fatalf("Subscribe returned after %v, before its deadline of %v: it did not wait for the confirmation", elapsed, d)
	}
	if elapsed > wait {
		t.Fatalf("Subscribe returned %v after its deadline", elapsed-d)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, wait, "the abandoned channel unsubscribed", func() bool { return numsub(t, rdb, ch) == 0 })
	if n := numsub(t, rdb, live); n != 1 {
		t.Fatalf("PUBSUB NUMSUB of the live channel = %d, want 1", n)
	}
	settle(t, a)
	publish(t, rdb, live, "0")
	woken(t, a, "live waiter after the freeze")
}

// Close releases a Subscribe that is waiting for the server's
// confirmation, with ErrClosed.
func TestCloseWhileSubscribing(t *testing.T) {
	redistest.Parallel(t)
	s, _ := startServer(t)
	h, _ := newHub(t, s)
	subscribe(t, h, redistest.Key(t)) // the connection is up
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	res := make(chan error, 1)
	go func() {
		_, err := h.Subscribe(context.Background(), redistest.Key(t), hub.WakeOne)
		res <- err
	}()
	select {
	case err := <-res:
		t.Fatalf("Subscribe on a frozen server returned %v before Close", err)
	case <-time.After(100 * time.Millisecond):
	}
	if err := h.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-res:
		if !errors.Is(err, hub.ErrClosed) {
			t.Fatalf("Subscribe interrupted by Close = %v, want ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatal("Close did not release a waiting Subscribe")
	}
}

// Waiters come and go while the server keeps dropping the subscription
// connection: every Subscribe returns, the hub ends up subscribed to
// exactly the channels still in use, on one connection, and delivers.
func TestChurnDuringReconnects(t *testing.T) {
	redistest.Parallel(t)
	s, rdb := startServer(t)
	h, name := newHub(t, s)
	steady := redistest.Key(t)
	keep := subscribe(t, h, steady)
	chans := make([]string, 8)
	for i := range chans {
		chans[i] = redistest.Key(t)
	}

	stop := make(chan struct{})
	var killer sync.WaitGroup
	kills := 0
	killer.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if n, err := rdb.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Result(); err == nil && n > 0 {
				kills++
			}
		}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for g := range 20 {
		wg.Go(func() {
			for i := range 30 {
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				sub, err := h.Subscribe(ctx, chans[(g+i)%len(chans)], hub.WakeOne)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				time.Sleep(time.Duration(g%5) * time.Millisecond)
				sub.Close()
			}
		})
	}
	wg.Wait()
	close(stop)
	killer.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Subscribe during reconnects: %v", err)
	}
	if kills == 0 {
		t.Fatal("no subscription connection was killed during the churn")
	}

	redistest.Eventually(t, 2*wait, "subscribed to the steady channel only, on one connection", func() bool {
		subs := subscribers(t, rdb, name)
		n, err := rdb.PubSubNumSub(context.Background(), append([]string{steady}, chans...)...).Result()
		if err != nil || len(subs) != 1 || subs[0]["sub"] != "1" || n[steady] != 1 {
			return false
		}
		for _, ch := range chans {
			if n[ch] != 0 {
				return false
			}
		}
		return true
	})
	settle(t, keep)
	publish(t, rdb, steady, "0")
	woken(t, keep, "steady waiter after the churn")
	if got := h.Connections(); got != 1 {
		t.Fatalf("Connections() = %d, want 1", got)
	}
}

// Sharded mode needs a cluster client; with another it fails cleanly.
func TestShardedNeedsCluster(t *testing.T) {
	rdb := srv.Client(t)
	h := hub.New(rdb, true, nil)
	defer h.Close()
	if s, err := h.Subscribe(context.Background(), redistest.Key(t), hub.WakeOne); err == nil || s != nil {
		t.Fatalf("sharded Subscribe on a non-cluster client = %v, %v; want an error", s, err)
	}
	if got := h.Connections(); got != 0 {
		t.Fatalf("Connections() = %d, want 0", got)
	}
}
