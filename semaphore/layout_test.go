package semaphore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// assertCount fails the test unless key is a STRING holding want with a
// PTTL in [minTTL, maxTTL] (-1: none).
func assertCount(t *testing.T, raw *redis.Client, key, want string, minTTL, maxTTL time.Duration) {
	t.Helper()
	bg := context.Background()
	if typ := raw.Type(bg, key).Val(); typ != "string" {
		t.Fatalf("TYPE %s = %q, want string", key, typ)
	}
	if v := raw.Get(bg, key).Val(); v != want {
		t.Fatalf("GET %s = %q, want %q", key, v, want)
	}
	if pttl := raw.PTTL(bg, key).Val(); pttl < minTTL || pttl > maxTTL {
		t.Fatalf("PTTL %s = %v, want within [%v, %v]", key, pttl, minTTL, maxTTL)
	}
}

// noTTL is assertCount's TTL range for a key without expiry.
const noTTL = -1

// TestLayout pins Redisson's RSemaphore layout after every operation: a
// STRING at the name holding the available count, no TTL, and on
// redisson_sc:{<name>} the new count after every increase, nothing after
// an acquire, a refused TrySetPermits or a drain.
func TestLayout(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := semaphore.New(newClient(t, nil), name, nil)
	l := listen(t, raw, channelOf(name))

	if n, err := s.AvailablePermits(bg); err != nil || n != 0 {
		t.Fatalf("AvailablePermits of a new semaphore = %d, %v; want 0", n, err)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("AvailablePermits created the key")
	}

	set := func(n int64, want bool) {
		t.Helper()
		ok, err := s.TrySetPermits(bg, n)
		if err != nil || ok != want {
			t.Fatalf("TrySetPermits(%d) = %v, %v; want %v", n, ok, err, want)
		}
	}
	set(3, true)
	assertCount(t, raw, name, "3", noTTL, noTTL)
	l.expect("TrySetPermits(3)", "3")
	set(5, false)
	assertCount(t, raw, name, "3", noTTL, noTTL)
	l.expectNone("a refused TrySetPermits")

	if err := s.Acquire(bg, 2); err != nil {
		t.Fatal(err)
	}
	assertCount(t, raw, name, "1", noTTL, noTTL)
	l.expectNone("Acquire")
	if err := s.TryAcquire(bg, 2, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(2) with 1 available = %v, want ErrNotAcquired", err)
	}
	assertCount(t, raw, name, "1", noTTL, noTTL)
	l.expectNone("a refused TryAcquire")

	steps := []struct {
		what string
		do   func() error
		want string
	}{
		{"Release(1)", func() error { return s.Release(bg, 1) }, "2"},
		{"AddPermits(3)", func() error { return s.AddPermits(bg, 3) }, "5"},
		{"AddPermits(-5)", func() error { return s.AddPermits(bg, -5) }, "0"},
		{"AddPermits(-2)", func() error { return s.AddPermits(bg, -2) }, "-2"},
		{"AddPermits(6)", func() error { return s.AddPermits(bg, 6) }, "4"},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.what, err)
		}
		assertCount(t, raw, name, st.want, noTTL, noTTL)
		l.expect(st.what, st.want)
	}

	drain := func(want int64) {
		t.Helper()
		n, err := s.DrainPermits(bg)
		if err != nil || n != want {
			t.Fatalf("DrainPermits = %d, %v; want %d", n, err, want)
		}
		l.expectNone("DrainPermits")
	}
	drain(4)
	assertCount(t, raw, name, "0", noTTL, noTTL)
	drain(0)
	assertCount(t, raw, name, "0", noTTL, noTTL)
	if err := s.AddPermits(bg, -3); err != nil {
		t.Fatal(err)
	}
	l.expect("AddPermits(-3)", "-3")
	drain(-3) // a negative count is raised to 0
	assertCount(t, raw, name, "0", noTTL, noTTL)

	// An absent key: drained as 0 and left absent; a release creates it.
	raw.Del(bg, name)
	drain(0)
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("DrainPermits created the key")
	}
	if err := s.Release(bg, 2); err != nil {
		t.Fatal(err)
	}
	assertCount(t, raw, name, "2", noTTL, noTTL)
	l.expect("Release(2) of an absent count", "2")
	if n, err := s.AvailablePermits(bg); err != nil || n != 2 {
		t.Fatalf("AvailablePermits = %d, %v; want 2", n, err)
	}
	raw.Del(bg, name)
}

// TestLayoutTTL: with Options.TTL, TrySetPermits sets the key with PX;
// acquires and releases (DECRBY, INCRBY) keep the TTL; AddPermits and
// DrainPermits, which Redisson writes with SET, leave none; a semaphore
// whose key expired has no permits.
func TestLayoutTTL(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	rc := newClient(t, nil)
	const ttl = 10 * time.Second
	for _, tc := range []struct {
		what string
		end  func(*semaphore.Semaphore) error
		want string
	}{
		{"AddPermits(1)", func(s *semaphore.Semaphore) error { return s.AddPermits(bg, 1) }, "3"},
		{"DrainPermits", func(s *semaphore.Semaphore) error { _, err := s.DrainPermits(bg); return err }, "0"},
	} {
		t.Run(tc.what, func(t *testing.T) {
			name := redistest.Key(t)
			s := semaphore.New(rc, name, &semaphore.Options{TTL: ttl})
			l := listen(t, raw, channelOf(name))
			if ok, err := s.TrySetPermits(bg, 2); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			assertCount(t, raw, name, "2", ttl-time.Second, ttl)
			l.expect("TrySetPermits(2)", "2")
			if err := s.Acquire(bg, 1); err != nil {
				t.Fatal(err)
			}
			assertCount(t, raw, name, "1", ttl-2*time.Second, ttl)
			if err := s.Release(bg, 1); err != nil {
				t.Fatal(err)
			}
			assertCount(t, raw, name, "2", ttl-2*time.Second, ttl)
			l.expect("Release(1)", "2")
			if err := tc.end(s); err != nil {
				t.Fatal(err)
			}
			assertCount(t, raw, name, tc.want, noTTL, noTTL)
			raw.Del(bg, name)
		})
	}

	t.Run("expiry", func(t *testing.T) {
		srv.RequireReal(t)
		name := redistest.Key(t)
		s := semaphore.New(rc, name, &semaphore.Options{TTL: 50 * time.Millisecond})
		if ok, err := s.TrySetPermits(bg, 2); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
		redistest.Eventually(t, 2*time.Second, "key expired", func() bool { return raw.Exists(bg, name).Val() == 0 })
		if n, err := s.AvailablePermits(bg); err != nil || n != 0 {
			t.Fatalf("AvailablePermits after expiry = %d, %v; want 0", n, err)
		}
		if err := s.TryAcquire(bg, 1, 0); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("TryAcquire after expiry = %v, want ErrNotAcquired", err)
		}
	})
}

// TestLayoutHashTag: a name with its own hash tag keeps it: the channel
// is redisson_sc:<name>, in the key's slot.
func TestLayoutHashTag(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := "{" + redistest.Key(t) + "}:downloads"
	l := listen(t, raw, "redisson_sc:"+name)
	s := semaphore.New(newClient(t, nil), name, nil)
	if err := s.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	assertCount(t, raw, name, "1", noTTL, noTTL)
	l.expect("Release(1)", "1")
	raw.Del(bg, name)
}
