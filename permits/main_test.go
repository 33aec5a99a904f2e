package permits_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own semaphore names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, runChild, &srv) }

// runChild is a child process's whole life: take a permit of semaphore
// name at addr, with the watchdog (WatchdogTimeout ms) when lease is 0 or
// with a fixed lease (ms) otherwise, print its id once it holds it, and
// hold it until killed.
func runChild(role string, args []string) int {
	if role != "hold-permit" || len(args) != 4 {
		fmt.Fprintln(os.Stderr, "bad child role:", role, args)
		return 2
	}
	addr, name := args[0], args[1]
	var ms [2]int64
	for i, a := range args[2:] {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		ms[i] = n
	}
	rc, err := relock.New(redis.NewClient(&redis.Options{Addr: addr}),
		&relock.Options{WatchdogTimeout: time.Duration(ms[0]) * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	p, err := permits.New(rc, name, &permits.Options{Lease: time.Duration(ms[1]) * time.Millisecond}).Acquire(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(p.ID())
	select {}
}

// quiet is the logger of clients whose renewals are meant to fail.
var quiet = slog.New(slog.DiscardHandler)

// newClient returns a relock client on srv with its own go-redis client,
// as if it were a separate process; both close when t ends.
func newClient(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), opts)
}

// newSemaphore returns semaphore name on rc with opts, its count set to n.
func newSemaphore(t testing.TB, rc *relock.Client, name string, n int64, opts *permits.Options) *permits.Semaphore {
	t.Helper()
	s := permits.New(rc, name, opts)
	if ok, err := s.TrySetPermits(context.Background(), n); err != nil || !ok {
		t.Fatalf("TrySetPermits(%s, %d) = %v, %v", name, n, ok, err)
	}
	return s
}

// acquireT takes a permit of s or fails the test.
func acquireT(t testing.TB, s *permits.Semaphore) *permits.Permit {
	t.Helper()
	p, err := s.TryAcquire(context.Background(), 5*time.Second)
	if err != nil {
		t.Fatalf("TryAcquire(%s): %v", s.Name(), err)
	}
	return p
}

// releaseT releases p or fails the test.
func releaseT(t testing.TB, p *permits.Permit) {
	t.Helper()
	if err := p.Release(context.Background()); err != nil {
		t.Fatalf("Release(%s): %v", p.ID(), err)
	}
}

// availableT returns s's available permits or fails the test.
func availableT(t testing.TB, s *permits.Semaphore) int64 {
	t.Helper()
	n, err := s.AvailablePermits(context.Background())
	if err != nil {
		t.Fatalf("AvailablePermits(%s): %v", s.Name(), err)
	}
	return n
}

// Redisson's names for semaphore name.
func timeoutOf(name string) string { return "{" + name + "}:timeout" }
func channelOf(name string) string { return "redisson_sc:{" + name + "}" }

// rawID is a permit id as the ZSET holds it.
func rawID(t testing.TB, id string) string {
	t.Helper()
	b, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// subscribe subscribes a raw client to channel, as a Redisson client's
// listener would, and returns once the server has the subscription.
func subscribe(t testing.TB, raw *redis.Client, channel string) *redis.PubSub {
	t.Helper()
	sub := raw.Subscribe(context.Background(), channel)
	t.Cleanup(func() { sub.Close() })
	if _, err := sub.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	return sub
}

// nextMessage returns the next message on sub, failing the test if none
// comes within 2s.
func nextMessage(t testing.TB, sub *redis.PubSub) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		t.Fatalf("no message: %v", err)
	}
	return msg.Payload
}

// noMessage fails the test if a message comes on sub within d.
func noMessage(t testing.TB, sub *redis.PubSub, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	if msg, err := sub.ReceiveMessage(ctx); err == nil {
		t.Fatalf("unexpected message %q on %s", msg.Payload, msg.Channel)
	}
}

// serverMillis reads the server's clock in epoch ms.
func serverMillis(t testing.TB, raw *redis.Client) int64 {
	t.Helper()
	now, err := raw.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMilli()
}

// waitSubscribed waits until n clients listen on semaphore name's
// channel.
func waitSubscribed(t testing.TB, raw *redis.Client, name string, n int64) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, "waiters subscribed", func() bool {
		return raw.PubSubNumSub(context.Background(), channelOf(name)).Val()[channelOf(name)] >= n
	})
}
