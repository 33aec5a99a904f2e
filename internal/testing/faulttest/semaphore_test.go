package faulttest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// semChannel is the channel of semaphore name.
func semChannel(name string) string { return "redisson_sc:{" + name + "}" }

// semSubscribed waits until the server counts n subscriptions to
// semaphore name's channel.
func semSubscribed(tb testing.TB, raw *redis.Client, name string, n int64) {
	tb.Helper()
	ch := semChannel(name)
	redistest.Eventually(tb, 5*time.Second, "semaphore waiter subscribed", func() bool {
		return raw.PubSubNumSub(context.Background(), ch).Val()[ch] == n
	})
}

// TestSemaphoreResetMidWait: a semaphore waiter whose subscription
// connection is reset while it waits still gets the permit soon after
// it is released.
//
//   - subscription: the reset comes before the release (tripped by a "0"
//     on the channel, which wakes nobody). The hub reconnects and
//     subscribes again, and the release's count arrives on the new
//     connection.
//   - release lost: the reset hits the release's message itself, which
//     is lost; the hub wakes every waiter of the broken connection, and
//     the waiter's retry finds the permit.
func TestSemaphoreResetMidWait(t *testing.T) {
	requireReal(t)
	for _, tc := range []struct {
		name string
		// arm runs while the waiter waits; it returns what disarms the
		// fault.
		arm func(t *testing.T, s *splitClient, name string) (disarm func())
		// afterRelease runs right after the release.
		afterRelease func(disarm func())
	}{
		{
			name: "subscription",
			arm: func(t *testing.T, s *splitClient, name string) func() {
				raw := newRedis(t, srv.Addr)
				old := subscriber(t, raw, s.Name)
				if old == "" {
					t.Fatal("no subscription connection")
				}
				must(t, s.sub.Reset("downstream"))
				must(t, raw.Publish(context.Background(), semChannel(name), "0").Err())
				redistest.Eventually(t, 5*time.Second, "subscription connection reset", func() bool {
					return !strings.Contains(raw.ClientList(context.Background()).Val(), "id="+old+" ")
				})
				must(t, s.sub.Disarm("downstream"))
				// As in TestResetMidWait: go-redis resubscribes at once
				// on a connection the hub replaces after its first
				// backoff; wait that out.
				semSubscribed(t, raw, name, 1)
				time.Sleep(300 * time.Millisecond)
				semSubscribed(t, raw, name, 1)
				return func() {}
			},
			afterRelease: func(func()) {},
		},
		{
			name: "release lost",
			arm: func(t *testing.T, s *splitClient, _ string) func() {
				must(t, s.sub.Reset("downstream"))
				return func() { must(t, s.sub.Disarm("downstream")) }
			},
			afterRelease: func(disarm func()) {
				time.Sleep(300 * time.Millisecond)
				disarm()
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bg := context.Background()
			name := redistest.Key(t)
			raw := newRedis(t, srv.Addr)
			releaser := semaphore.New(newClient(t, srv.Addr, nil), name, nil)

			s := newSplitClient(t)
			if err := s.Ping(bg).Err(); err != nil { // the command connection, through cmd
				t.Fatal(err)
			}
			rc, err := relock.New(s.Client, &relock.Options{Logger: quiet, SyncReplicas: relock.SyncOff})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() })
			waiter := semaphore.New(rc, name, nil)
			checkedEviction(t, raw, s, func() error { return waiter.TryAcquire(bg, 1, 0) })
			s.subNext.Store(true) // the waiter's subscription, through sub
			type result struct {
				at  time.Time
				err error
			}
			got := make(chan result, 1)
			go func() {
				err := waiter.Acquire(bg, 1)
				got <- result{time.Now(), err}
			}()
			semSubscribed(t, raw, name, 1)
			if s.subNext.Load() {
				t.Fatal("the waiter subscribed without dialing through the sub proxy")
			}

			disarm := tc.arm(t, s, name)
			released := time.Now()
			if err := releaser.Release(bg, 1); err != nil {
				t.Fatal(err)
			}
			tc.afterRelease(disarm)
			var r result
			select {
			case r = <-got:
			case <-time.After(10 * time.Second):
				t.Fatalf("waiter did not get the permit within 10s of the release; count %q", raw.Get(bg, name).Val())
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			took := r.at.Sub(released)
			t.Logf("waiter got the permit %v after the release", took.Round(time.Millisecond))
			if took > 5*time.Second {
				t.Errorf("waiter got the permit %v after the release: it was not woken", took)
			}
			if v := raw.Get(bg, name).Val(); v != "0" {
				t.Errorf("count after the waiter acquired = %q, want 0", v)
			}
		})
	}
}

// TestSemaphoreReleaseNotRetried: a Release whose reply is lost with its
// connection returns the error and is not sent again: the permit was
// added once, not twice, so the semaphore never holds more permits than
// were released.
func TestSemaphoreReleaseNotRetried(t *testing.T) {
	requireReal(t)
	bg := context.Background()
	raw := newRedis(t, srv.Addr)
	x := newProxy(t)
	name := redistest.Key(t)
	// Default go-redis options, retries on: relock sends its scripts
	// through a copy with retries off.
	s := semaphore.New(newClient(t, x.Addr, &relock.Options{Logger: quiet}), name, nil)
	if err := s.Release(bg, 1); err != nil { // loads the script: the next call is one EVALSHA
		t.Fatal(err)
	}

	must(t, x.add("drop_replies", "timeout", "downstream", map[string]any{"timeout": 0}))
	done := make(chan error, 1)
	go func() { done <- s.Release(bg, 1) }()
	redistest.Eventually(t, 5*time.Second, "release ran", func() bool { return raw.Get(bg, name).Val() == "2" })
	time.Sleep(300 * time.Millisecond)
	must(t, x.remove("drop_replies")) // closes the connection: the reply is lost
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Release with its reply lost returned no error")
		}
		t.Logf("Release with its reply lost: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Release with its reply lost did not return")
	}
	time.Sleep(200 * time.Millisecond) // room for a retry to land, if any were sent
	if v := raw.Get(bg, name).Val(); v != "2" {
		t.Fatalf("count after two Releases of 1 = %q, want 2: the lost one was sent again", v)
	}
}
