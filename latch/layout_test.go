package latch_test

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// TestLayout pins Redisson's RCountDownLatch layout, read raw after every
// operation: the count is a string at the latch's name, without expiry,
// deleted when it reaches zero; the channel
// redisson_countdownlatch__channel__{<name>} carries exactly "1" for a
// count set, "0" for the count reaching zero and "1" for a delete, and
// nothing for a refused set, a count down that does not reach zero, a
// count down of an open latch, or a delete of nothing.
func TestLayout(t *testing.T) {
	for _, tc := range []struct{ what, name string }{
		{"plain", redistest.Key(t)},
		// The channel wraps the whole name, tag and all, in braces: on a
		// cluster it hashes to another slot (internal/clustertest).
		{"hash tag", "{" + redistest.Key(t) + "}:latch"},
	} {
		t.Run(tc.what, func(t *testing.T) { layout(t, tc.name) })
	}
}

func layout(t *testing.T, name string) {
	bg := context.Background()
	raw := srv.Client(t)
	l := latch.New(newClient(t), name, nil)
	sub := subscribe(t, raw, channelOf(name))

	// count checks the raw record and what Count reports.
	count := func(op string, want int64) {
		t.Helper()
		got, err := raw.Get(bg, name).Result()
		switch {
		case want == 0 && err != redis.Nil:
			t.Fatalf("after %s: GET %s = %q, %v; want no key (an open latch)", op, name, got, err)
		case want != 0:
			if typ := raw.Type(bg, name).Val(); typ != "string" {
				t.Fatalf("after %s: TYPE %s = %s, want string", op, name, typ)
			}
			if n, err := raw.Get(bg, name).Int64(); err != nil || n != want {
				t.Fatalf("after %s: GET %s = %d, %v; want %d", op, name, n, err, want)
			}
			if ttl := raw.PTTL(bg, name).Val(); ttl != -1 {
				t.Fatalf("after %s: PTTL %s = %v, want none: a latch has no lease", op, name, ttl)
			}
		}
		if n, err := l.Count(bg); err != nil || n != want {
			t.Fatalf("after %s: Count = %d, %v; want %d", op, n, err, want)
		}
	}
	yes := func(op string, ok bool, err error, want bool) {
		t.Helper()
		if err != nil || ok != want {
			t.Fatalf("%s = %v, %v; want %v", op, ok, err, want)
		}
	}
	down := func() {
		t.Helper()
		if err := l.CountDown(bg); err != nil {
			t.Fatalf("CountDown: %v", err)
		}
	}

	count("nothing", 0)
	ok, err := l.TrySetCount(bg, 3)
	yes("TrySetCount(3)", ok, err, true)
	count("TrySetCount(3)", 3)
	ok, err = l.TrySetCount(bg, 5)
	yes("TrySetCount(5) on a set latch", ok, err, false)
	count("a refused TrySetCount", 3)
	down()
	count("CountDown", 2)
	down()
	count("CountDown", 1)
	down()
	count("the last CountDown", 0)
	down()
	count("a CountDown of an open latch", 0) // no -1 left behind
	ok, err = l.TrySetCount(bg, 2)
	yes("TrySetCount(2) on an open latch", ok, err, true)
	count("TrySetCount(2)", 2)
	ok, err = l.Delete(bg)
	yes("Delete", ok, err, true)
	count("Delete", 0)
	ok, err = l.Delete(bg)
	yes("Delete of an open latch", ok, err, false)

	// A marker of the test's own ends the sequence: anything relock
	// published comes before it.
	if err := raw.Publish(bg, channelOf(name), "end").Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for msg := receive(t, sub); msg != "end"; msg = receive(t, sub) {
		got = append(got, msg)
	}
	if want := []string{"1", "0", "1", "1"}; !slices.Equal(got, want) {
		t.Fatalf("messages on %s: %q, want %q (set, zero, set, delete)", channelOf(name), got, want)
	}
}
