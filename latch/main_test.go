package latch_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own latch names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// limit bounds every wait for something that must happen. It is far above
// what a loaded 2-core machine needs, so only a bug can exhaust it.
const limit = 10 * time.Second

// newClient returns a relock client on srv, as the limited ACL user, with
// its own go-redis client, as if it were a separate process; both close
// when t ends.
func newClient(t testing.TB) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), nil)
}

// channelOf is Redisson's channel of latch name.
func channelOf(name string) string { return "redisson_countdownlatch__channel__{" + name + "}" }

// subscribe returns a raw subscriber on channel, playing a Redisson
// client's listener, once the server has confirmed it.
func subscribe(t testing.TB, raw *redis.Client, channel string) *redis.PubSub {
	t.Helper()
	sub := raw.Subscribe(context.Background(), channel)
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sub
}

// receive returns the next message on sub, failing t when none comes
// within limit.
func receive(t testing.TB, sub *redis.PubSub) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatalf("no message: %v", err)
	}
	return msg.Payload
}

// An outcome is what one Await returned, and when.
type outcome struct {
	err error
	at  time.Time
}

// awaitAll starts n Awaits on latches named name, the i-th on
// clients[i%len(clients)], and returns where their outcomes arrive.
func awaitAll(ctx context.Context, clients []*relock.Client, name string, n int) <-chan outcome {
	out := make(chan outcome, n)
	for i := range n {
		l := latch.New(clients[i%len(clients)], name, nil)
		go func() {
			err := l.Await(ctx)
			out <- outcome{err, time.Now()}
		}()
	}
	return out
}

// collect receives n outcomes from out, failing t if any Await failed or
// they do not all come within within. It returns the last one's time.
func collect(t testing.TB, out <-chan outcome, n int, within time.Duration) time.Time {
	t.Helper()
	timeout := time.After(within)
	var last time.Time
	for i := range n {
		select {
		case o := <-out:
			if o.err != nil {
				t.Fatalf("Await %d: %v", i, o.err)
			}
			if o.at.After(last) {
				last = o.at
			}
		case <-timeout:
			t.Fatalf("%d of %d Awaits returned within %v", i, n, within)
		}
	}
	return last
}

// pending fails t if an outcome arrives from out within d: the Awaits
// must still be waiting.
func pending(t testing.TB, out <-chan outcome, d time.Duration) {
	t.Helper()
	select {
	case o := <-out:
		t.Fatalf("Await returned %v while the latch was closed", o.err)
	case <-time.After(d):
	}
}

// asleep counts the goroutines asleep in internal/wait's loop: blocked
// in the select of the loop itself (not in a subscribe, or in a read of
// the count), where a waiter sends nothing until it is woken.
func asleep() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		// "goroutine 7 [select]:" (or "[select, 2 minutes]:"), then the
		// frames, innermost first; runtime frames are hidden.
		header, frames, _ := strings.Cut(g, "\n")
		if strings.Contains(header, " [select") && strings.HasPrefix(frames, "github.com/relock-go/relock/internal/wait.(*waiter).wait(") {
			count++
		}
	}
	return count
}
