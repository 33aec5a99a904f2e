package clustertest_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// latchChannel is Redisson's channel of latch name: the whole name in
// braces, so that a name with a hash tag of its own puts it in another
// slot than the count.
func latchChannel(name string) string { return "redisson_countdownlatch__channel__{" + name + "}" }

// TestLatchCluster: on the cluster, as the limited ACL user, awaiters on
// three clients are woken by the CountDown that takes a latch to zero,
// for names on every master and for names with a hash tag whose channel
// lies on another master than the count. With sharded pub/sub (the
// default) each client subscribes once, with SSUBSCRIBE on the master of
// the channel's own slot, and nowhere globally; with global pub/sub the
// message reaches them too. A raw listener, as a Redisson client's,
// hears the "0".
func TestLatchCluster(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	base := redistest.Key(t)
	names := namesOnEachMaster(t, c, rdb, base)
	tagged := taggedLatchNames(t, c, rdb, base)
	for _, mode := range []struct {
		what string
		mode relock.PubSubMode
	}{{"sharded", relock.PubSubAuto}, {"global", relock.PubSubGlobal}} {
		t.Run(mode.what, func(t *testing.T) {
			clients := make([]*relock.Client, 3)
			for i := range clients {
				clients[i] = newClient(t, c.LockClient(t), &relock.Options{PubSub: mode.mode})
			}
			for master, name := range names {
				t.Run("on "+master, func(t *testing.T) {
					latchWakes(t, c, rdb, clients, name, mode.mode != relock.PubSubGlobal)
				})
			}
			for master, name := range tagged {
				t.Run("hash tag on "+master, func(t *testing.T) {
					latchWakes(t, c, rdb, clients, name, mode.mode != relock.PubSubGlobal)
				})
			}
		})
	}
}

// taggedLatchNames returns, for each master, a latch name with a hash tag
// whose count lies on that master and whose channel lies on another.
func taggedLatchNames(t *testing.T, c *redistest.Cluster, rdb *redis.ClusterClient, base string) map[string]string {
	t.Helper()
	masters, err := c.Masters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for i := 0; len(names) < len(masters); i++ {
		if i == 1000 {
			t.Fatalf("no tagged latch name %s:{N} for every master %v: %v", base, masters, names)
		}
		name := base + ":{" + strconv.Itoa(i) + "}"
		m := masterOf(t, rdb, name)
		if _, ok := names[m]; !ok && masterOf(t, rdb, latchChannel(name)) != m {
			names[m] = name
		}
	}
	return names
}

// latchWakes sets latch name to 2, starts two awaiters on each client,
// waits until each client has its one subscription to the channel,
// counts down twice and checks that every awaiter returns, that the
// listener heard "0", and that the count is gone from its master.
func latchWakes(t *testing.T, c *redistest.Cluster, rdb *redis.ClusterClient, clients []*relock.Client, name string, sharded bool) {
	bg := context.Background()
	channel := latchChannel(name)
	keyMaster, chanMaster := masterOf(t, rdb, name), masterOf(t, rdb, channel)
	if tagged := strings.Contains(name, "{"); tagged != (slotOf(t, rdb, name) != slotOf(t, rdb, channel)) {
		t.Fatalf("%s: slot %d, its channel's %d: want them apart exactly for a tagged name",
			name, slotOf(t, rdb, name), slotOf(t, rdb, channel))
	}

	var listener *redis.PubSub
	if sharded {
		listener = rdb.SSubscribe(bg, channel)
	} else {
		listener = rdb.Subscribe(bg, channel)
	}
	defer listener.Close()
	if _, err := listener.Receive(bg); err != nil {
		t.Fatal(err)
	}

	l := latch.New(clients[0], name, nil)
	if ok, err := l.TrySetCount(bg, 2); err != nil || !ok {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if got, _ := c.Node(keyMaster).Client(t).Get(bg, name).Result(); got != "2" {
		t.Fatalf("count on %s's master %s: %q, want 2", name, keyMaster, got)
	}
	const each = 2
	done := make(chan error, each*len(clients))
	for i := range each * len(clients) {
		a := latch.New(clients[i%len(clients)], name, nil)
		go func() { done <- a.Await(bg) }()
	}
	// Each client's subscription, plus the listener's.
	want := int64(len(clients) + 1)
	redistest.Eventually(t, wait, "one subscription per client", func() bool {
		if sharded {
			return c.Node(chanMaster).Client(t).PubSubShardNumSub(bg, channel).Val()[channel] == want
		}
		var n int64
		for _, s := range c.Live() {
			n += s.Client(t).PubSubNumSub(bg, channel).Val()[channel]
		}
		return n == want
	})
	if sharded {
		for _, s := range c.Live() {
			if n := s.Client(t).PubSubNumSub(bg, channel).Val()[channel]; n != 0 {
				t.Fatalf("%d global subscriptions to %s on %s in sharded mode", n, channel, s.Addr)
			}
		}
	}
	time.Sleep(100 * time.Millisecond) // let the awaiters' reads after subscribing land

	for _, rc := range clients[1:] {
		if err := latch.New(rc, name, nil).CountDown(bg); err != nil {
			t.Fatal(err)
		}
	}
	opened := time.Now()
	for i := range each * len(clients) {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Await: %v", err)
			}
		case <-time.After(wait):
			t.Fatalf("%d of %d awaiters returned within %v of the last CountDown", i, each*len(clients), wait)
		}
	}
	t.Logf("%s (count on %s, channel on %s): all awaiters returned %v after the last CountDown",
		name, keyMaster, chanMaster, time.Since(opened))
	ctx, cancel := context.WithTimeout(bg, wait)
	defer cancel()
	msg, err := listener.ReceiveMessage(ctx)
	switch {
	case err != nil:
		t.Fatalf("listener on %s: %v", channel, err)
	case msg.Payload != "1":
		t.Fatalf("first message on %s: %q, want 1 (the count set)", channel, msg.Payload)
	}
	if msg, err = listener.ReceiveMessage(ctx); err != nil || msg.Payload != "0" {
		t.Fatalf("second message on %s: %v, %v; want 0 (the count reached zero)", channel, msg, err)
	}
	if n := rdb.Exists(bg, name).Val(); n != 0 {
		t.Fatal("the CountDown to zero left the count")
	}
}

// TestLatchScriptCannotPublish pins why relock publishes a tagged latch's
// message apart from its script: Redisson's own countDown, one script
// with the count and the channel in KEYS, fails with CROSSSLOT on such a
// name, and a script that SPUBLISHes to a channel of another master's
// slot is refused.
func TestLatchScriptCannotPublish(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	bg := context.Background()
	for _, name := range taggedLatchNames(t, c, rdb, redistest.Key(t)) {
		channel := latchChannel(name)
		redisson := "local v = redis.call('decr', KEYS[1]); " +
			"if v <= 0 then redis.call('del', KEYS[1]) end; " +
			"if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end"
		err := rdb.Eval(bg, redisson, []string{name, channel}, "0", "SPUBLISH").Err()
		if err == nil || !strings.HasPrefix(err.Error(), "CROSSSLOT") {
			t.Fatalf("Redisson's countDown on %s: %v, want CROSSSLOT", name, err)
		}
		spublish := "redis.call('decr', KEYS[1]); redis.call('spublish', ARGV[1], '0')"
		if err := rdb.Eval(bg, spublish, []string{name}, channel).Err(); err == nil {
			t.Fatalf("a script on %s SPUBLISHed to %s, on another master", name, channel)
		}
		rdb.Del(bg, name)
	}
}

// TestLatchSentinel: through failover clients, awaiters on two clients,
// subscribed once each on the master, are woken by the CountDown that
// takes a latch to zero, for a plain name and a tagged one.
func TestLatchSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	bg := context.Background()
	clients := []*relock.Client{newClient(t, s.Client(t), nil), newClient(t, s.Client(t), nil)}
	master, err := s.MasterAddr(bg)
	if err != nil {
		t.Fatal(err)
	}
	node := s.Node(master).Client(t)
	for _, name := range []string{redistest.Key(t), "{" + redistest.Key(t) + "}:latch"} {
		channel := latchChannel(name)
		l := latch.New(clients[0], name, nil)
		if ok, err := l.TrySetCount(bg, 1); err != nil || !ok {
			t.Fatalf("TrySetCount(%s) = %v, %v", name, ok, err)
		}
		if got := node.Get(bg, name).Val(); got != "1" {
			t.Fatalf("count of %s on the master %s: %q, want 1", name, master, got)
		}
		done := make(chan error, 4)
		for i := range 4 {
			a := latch.New(clients[i%2], name, nil)
			go func() { done <- a.Await(bg) }()
		}
		redistest.Eventually(t, wait, "one subscription per client on the master", func() bool {
			return node.PubSubNumSub(bg, channel).Val()[channel] == 2
		})
		time.Sleep(100 * time.Millisecond) // let the awaiters' reads after subscribing land
		if err := latch.New(clients[1], name, nil).CountDown(bg); err != nil {
			t.Fatal(err)
		}
		for i := range 4 {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Await(%s): %v", name, err)
				}
			case <-time.After(wait):
				t.Fatalf("%d of 4 awaiters of %s returned within %v of the CountDown", i, name, wait)
			}
		}
		if n := node.Exists(bg, name).Val(); n != 0 {
			t.Fatalf("the CountDown to zero left %s on the master", name)
		}
	}
}
