package hub_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests that do not stop,
// pause or restart their server; each test uses its own channel names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// wait bounds every wait for something that must happen. It is far above
// what a loaded 2-core machine needs, so only a bug can exhaust it.
const wait = 5 * time.Second

var hubNames atomic.Int64

// newHub returns a hub on s whose go-redis client has a name of its own, so
// CLIENT LIST tells its connections apart; hub and client close when t
// ends, hub first.
func newHub(t *testing.T, s *redistest.Server) (*hub.Hub, string) {
	t.Helper()
	name := "relock-hub-" + strconv.FormatInt(hubNames.Add(1), 10)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ClientName: name})
	h := hub.New(rdb, false, nil)
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("hub Close: %v", err)
		}
		rdb.Close()
	})
	return h, name
}

// subscribe subscribes to channel, a lock's (hub.WakeOne), or fails
// the test; the subscription is closed when t ends (a second Close is
// harmless).
func subscribe(t *testing.T, h *hub.Hub, channel string) *hub.Subscription {
	t.Helper()
	return subscribeAs(t, h, channel, hub.WakeOne)
}

// subscribeAs is subscribe for a channel with wake policy wake.
func subscribeAs(t *testing.T, h *hub.Hub, channel string, wake hub.Wake) *hub.Subscription {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	s, err := h.Subscribe(ctx, channel, wake)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", channel, err)
	}
	t.Cleanup(s.Close)
	return s
}

// publish publishes payload on channel and returns how many server
// connections received it.
func publish(t *testing.T, rdb *redis.Client, channel, payload string) int64 {
	t.Helper()
	n, err := rdb.Publish(context.Background(), channel, payload).Result()
	if err != nil {
		t.Fatalf("PUBLISH %s %s: %v", channel, payload, err)
	}
	return n
}

func numsub(t *testing.T, rdb *redis.Client, channel string) int64 {
	t.Helper()
	m, err := rdb.PubSubNumSub(context.Background(), channel).Result()
	if err != nil {
		t.Fatalf("PUBSUB NUMSUB %s: %v", channel, err)
	}
	return m[channel]
}

// woken fails the test unless s receives a wake-up within wait.
func woken(t *testing.T, s *hub.Subscription, what string) {
	t.Helper()
	select {
	case <-s.C():
	case <-time.After(wait):
		t.Fatalf("no wake-up within %v: %s", wait, what)
	}
}

// pending reports, without blocking, whether s holds a wake-up, and
// consumes it.
func pending(s *hub.Subscription) bool {
	select {
	case <-s.C():
		return true
	default:
		return false
	}
}

// A barrier makes the negative assertions ("no one else was woken")
// exact without sleeping: the hub reads its one connection in order and
// the server sends a connection's messages in publish order, so once the
// barrier's own message has woken its subscription, every message
// published before it has been delivered.
type barrier struct {
	t   *testing.T
	rdb *redis.Client
	ch  string
	sub *hub.Subscription
}

func newBarrier(t *testing.T, h *hub.Hub, rdb *redis.Client) *barrier {
	t.Helper()
	ch := "barrier:" + redistest.Key(t)
	return &barrier{t: t, rdb: rdb, ch: ch, sub: subscribe(t, h, ch)}
}

// sync returns once every message published before it has been delivered.
func (b *barrier) sync() {
	b.t.Helper()
	for len(b.sub.C()) > 0 {
		<-b.sub.C()
	}
	publish(b.t, b.rdb, b.ch, "1")
	woken(b.t, b.sub, "barrier message")
}

// clientInfo is one line of CLIENT LIST.
type clientInfo map[string]string

func clientList(t *testing.T, rdb *redis.Client) []clientInfo {
	t.Helper()
	out, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	var list []clientInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		ci := clientInfo{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			ci[k] = v
		}
		list = append(list, ci)
	}
	return list
}

// subscribers returns the CLIENT LIST entries named name that hold
// subscriptions.
func subscribers(t *testing.T, rdb *redis.Client, name string) []clientInfo {
	t.Helper()
	var subs []clientInfo
	for _, c := range clientList(t, rdb) {
		if c["name"] != name {
			continue
		}
		for _, k := range []string{"sub", "psub", "ssub"} {
			if v, ok := c[k]; ok && v != "0" {
				subs = append(subs, c)
				break
			}
		}
	}
	return subs
}
