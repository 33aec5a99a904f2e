package semaphore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// Redisson's RSemaphore operations that add permits, played with raw
// commands from its layout (docs/wire-layout.md): each changes the count
// and publishes the new count on redisson_sc:{<name>}.
var redissonAdds = []struct {
	what string
	do   func(raw *redis.Client, name string) error
}{
	{"release(1)", func(raw *redis.Client, name string) error {
		bg := context.Background()
		n, err := raw.IncrBy(bg, name, 1).Result()
		if err != nil {
			return err
		}
		return raw.Publish(bg, channelOf(name), n).Err()
	}},
	{"trySetPermits(1)", func(raw *redis.Client, name string) error {
		bg := context.Background()
		if ok, err := raw.SetNX(bg, name, 1, 0).Result(); err != nil || !ok {
			return err
		}
		return raw.Publish(bg, channelOf(name), 1).Err()
	}},
	{"addPermits(1)", func(raw *redis.Client, name string) error {
		bg := context.Background()
		v, err := raw.Get(bg, name).Int64()
		if err != nil && err != redis.Nil {
			return err
		}
		if err := raw.Set(bg, name, v+1, 0).Err(); err != nil {
			return err
		}
		return raw.Publish(bg, channelOf(name), v+1).Err()
	}},
}

// TestRedissonWakesRelock: a relock waiter is woken by each of Redisson's
// operations that add permits, and takes the permit at once.
func TestRedissonWakesRelock(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	for _, op := range redissonAdds {
		t.Run(op.what, func(t *testing.T) {
			name := redistest.Key(t)
			got := acquiring(bg, semaphore.New(newClient(t, nil), name, nil), 1)
			waitSubscribed(t, raw, channelOf(name), 1)
			time.Sleep(50 * time.Millisecond) // let the waiter's attempt after subscribing land
			released := time.Now()
			if err := op.do(raw, name); err != nil {
				t.Fatal(err)
			}
			r := within(t, got, 5*time.Second, "relock waiter after Redisson's "+op.what)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if took := r.at.Sub(released); took > time.Second {
				t.Fatalf("relock waiter acquired %v after Redisson's %s: not woken by it", took, op.what)
			}
			if v := raw.Get(bg, name).Val(); v != "0" {
				t.Fatalf("count after the waiter acquired = %q, want 0", v)
			}
			raw.Del(bg, name)
		})
	}
}

// TestRelockWakesRedisson: every relock operation that adds permits
// publishes what Redisson's listener reads: the new available count as a
// decimal integer (it wakes that many of its waiters), equal to the
// count in Redis; and Redisson's acquire (GET, then DECRBY if enough)
// takes what relock set.
func TestRelockWakesRedisson(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := semaphore.New(newClient(t, nil), name, nil)
	l := listen(t, raw, channelOf(name))
	for _, op := range []struct {
		what string
		do   func() error
	}{
		{"TrySetPermits(2)", func() error { _, err := s.TrySetPermits(bg, 2); return err }},
		{"Release(3)", func() error { return s.Release(bg, 3) }},
		{"AddPermits(4)", func() error { return s.AddPermits(bg, 4) }},
	} {
		if err := op.do(); err != nil {
			t.Fatalf("%s: %v", op.what, err)
		}
		payload := l.next()
		n, err := strconv.ParseInt(payload, 10, 64)
		if err != nil {
			t.Fatalf("%s published %q: Redisson's listener reads a decimal integer", op.what, payload)
		}
		count, err := raw.Get(bg, name).Int64()
		if err != nil || n != count {
			t.Fatalf("%s published %d with the count at %d (%v)", op.what, n, count, err)
		}
	}

	// Redisson's tryAcquire(5): GET, at least 5, DECRBY 5.
	if v, err := raw.Get(bg, name).Int64(); err != nil || v < 5 {
		t.Fatalf("count %d (%v): Redisson's tryAcquire(5) would fail", v, err)
	}
	raw.DecrBy(bg, name, 5)
	if n, err := s.AvailablePermits(bg); err != nil || n != 4 {
		t.Fatalf("AvailablePermits after Redisson took 5 of 9 = %d, %v; want 4", n, err)
	}
	raw.Del(bg, name)
}
