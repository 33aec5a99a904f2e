package latch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// redissonCountDown is Redisson's RCountDownLatch countDown script, as
// its source writes it: KEYS the count and the channel, ARGV the zero
// message and the publish command.
const redissonCountDown = "local v = redis.call('decr', KEYS[1]); " +
	"if v <= 0 then redis.call('del', KEYS[1]) end; " +
	"if v == 0 then redis.call(ARGV[2], KEYS[2], ARGV[1]) end"

// TestBadTTL: a negative or sub-millisecond TTL is an error matching
// relock.ErrInvalidArgument from every method, and writes nothing.
func TestBadTTL(t *testing.T) {
	bg := context.Background()
	rc := newClient(t)
	name := redistest.Key(t)
	for _, ttl := range []time.Duration{-time.Millisecond, -1, 1, time.Millisecond - 1} {
		l := latch.New(rc, name, &latch.Options{TTL: ttl})
		if ok, err := l.TrySetCount(bg, 1); ok || !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("TTL %v: TrySetCount = %v, %v; want relock.ErrInvalidArgument", ttl, ok, err)
		}
		if err := l.CountDown(bg); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("TTL %v: CountDown = %v; want relock.ErrInvalidArgument", ttl, err)
		}
	}
	if n := srv.Client(t).Exists(bg, name).Val(); n != 0 {
		t.Fatal("a latch with a bad TTL wrote its count")
	}
}

// TestTTL: TrySetCount gives the count Options.TTL, relock's CountDown
// and Redisson's keep it, a TrySetCount refused on a closed latch leaves
// it, and the count expires with it, which opens the latch. A latch
// without the option sets no TTL.
func TestTTL(t *testing.T) {
	srv.RequireReal(t) // PTTL and expiry on the server's clock
	bg := context.Background()
	raw := srv.Client(t)
	rc := newClient(t)
	const ttl = 10 * time.Second
	pttl := func(name string) time.Duration {
		t.Helper()
		d, err := raw.PTTL(bg, name).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}

	name := redistest.Key(t)
	l := latch.New(rc, name, &latch.Options{TTL: ttl})
	if ok, err := l.TrySetCount(bg, 4); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if d := pttl(name); d <= 0 || d > ttl {
		t.Fatalf("PTTL after TrySetCount = %v, want in (0, %v]", d, ttl)
	}
	if err := l.CountDown(bg); err != nil {
		t.Fatal(err)
	}
	// It replies nothing: go-redis's redis.Nil.
	if err := raw.Eval(bg, redissonCountDown, []string{name, channelOf(name)}, "0", "PUBLISH").Err(); !errors.Is(err, redis.Nil) {
		t.Fatal(err)
	}
	if n, err := l.Count(bg); err != nil || n != 2 {
		t.Fatalf("Count = %d, %v; want 2", n, err)
	}
	if d := pttl(name); d <= 0 || d > ttl {
		t.Fatalf("PTTL after relock's and Redisson's countDown = %v, want in (0, %v]", d, ttl)
	}
	if ok, err := latch.New(rc, name, &latch.Options{TTL: time.Hour}).TrySetCount(bg, 9); ok || err != nil {
		t.Fatalf("TrySetCount on a closed latch = %v, %v; want false, nil", ok, err)
	}
	if d := pttl(name); d <= 0 || d > ttl {
		t.Fatalf("PTTL after a refused TrySetCount = %v, want in (0, %v]", d, ttl)
	}

	// An expiry opens the latch: a short TTL, on a fresh name.
	short := latch.New(rc, redistest.Key(t)+":short", &latch.Options{TTL: 50 * time.Millisecond})
	if ok, err := short.TrySetCount(bg, 1); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	redistest.Eventually(t, limit, "the count expires", func() bool {
		return raw.Exists(bg, short.Name()).Val() == 0
	})
	if ok, err := short.TryAwait(bg, 0); !ok || err != nil {
		t.Fatalf("TryAwait after the expiry = %v, %v; want true", ok, err)
	}

	plain := latch.New(rc, redistest.Key(t)+":plain", nil)
	if ok, err := plain.TrySetCount(bg, 1); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	if d := pttl(plain.Name()); d != -1 {
		t.Fatalf("PTTL without Options.TTL = %v, want -1 (none)", d)
	}
	raw.Del(bg, name, plain.Name())
}
