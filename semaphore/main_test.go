package semaphore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own semaphore names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// newClient returns a relock client on srv with its own go-redis client,
// as if it were a separate process; both close when t ends.
func newClient(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), opts)
}

// channelOf is the channel of semaphore name (a name without a hash tag).
func channelOf(name string) string { return "redisson_sc:{" + name + "}" }

// subscribers counts the subscriptions to channel on the server behind
// raw.
func subscribers(raw *redis.Client, channel string) int64 {
	return raw.PubSubNumSub(context.Background(), channel).Val()[channel]
}

// waitSubscribed waits until n subscriptions to channel exist.
func waitSubscribed(t testing.TB, raw *redis.Client, channel string, n int64) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, "waiters subscribed", func() bool { return subscribers(raw, channel) == n })
}

// A listener is a raw subscriber to a semaphore's channel, as Redisson's
// SemaphorePubSub would be, reading every message in the server's order.
type listener struct {
	t       testing.TB
	raw     *redis.Client
	channel string
	sub     *redis.PubSub
}

// listen subscribes to channel through raw and waits for the server's
// confirmation.
func listen(t testing.TB, raw *redis.Client, channel string) *listener {
	t.Helper()
	sub := raw.Subscribe(context.Background(), channel)
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &listener{t: t, raw: raw, channel: channel, sub: sub}
}

// next returns the next message's payload, failing the test if none
// comes within 2s.
func (l *listener) next() string {
	l.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	msg, err := l.sub.ReceiveMessage(ctx)
	if err != nil {
		l.t.Fatalf("no message on %s: %v", l.channel, err)
	}
	return msg.Payload
}

// expect fails the test unless the next message is want.
func (l *listener) expect(what, want string) {
	l.t.Helper()
	if got := l.next(); got != want {
		l.t.Fatalf("%s published %q on %s, want %q", what, got, l.channel, want)
	}
}

// expectNone fails the test if anything was published since the last
// message read: it publishes a marker of its own, which the server
// delivers after everything published before it, and expects that next.
func (l *listener) expectNone(what string) {
	l.t.Helper()
	if err := l.raw.Publish(context.Background(), l.channel, "marker").Err(); err != nil {
		l.t.Fatal(err)
	}
	if got := l.next(); got != "marker" {
		l.t.Fatalf("%s published %q on %s, want nothing", what, got, l.channel)
	}
}
