package renew_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/renew"
)

// These tests run in a testing/synctest bubble on miniredis with
// ClockTTL, so TTLs follow the bubble's fake clock: minutes of renewals
// take milliseconds, and every instant below is exact.

// The default lease and its renewal interval.
const (
	vlease    = 30 * time.Second
	vinterval = vlease / 3
)

// bubble returns, inside a bubble, a miniredis whose TTLs follow the fake
// clock, a client on it with a counter hook, and a watchdog with lease
// vlease; all end with the bubble's test.
func bubble(t *testing.T) (*miniredis.Miniredis, *redis.Client, *counter, *renew.Watchdog) {
	t.Helper()
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	t.Cleanup(m.Close)
	// The address is never dialled; an IP literal keeps go-redis from
	// resolving a host name, which cannot run in a bubble.
	rdb := redis.NewClient(&redis.Options{
		Addr:                  "127.0.0.1:6379",
		Dialer:                func(context.Context, string, string) (net.Conn, error) { return m.Dial() },
		ContextTimeoutEnabled: true,
	})
	t.Cleanup(func() { rdb.Close() })
	c := &counter{}
	rdb.AddHook(c)
	return m, rdb, c, newWatchdog(t, rdb, vlease)
}

// settle advances the fake clock by d and lets every goroutine finish what
// that instant started.
func settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// Ten minutes of renewals: one round every interval, and the lock's TTL
// never drops below the lease minus one interval.
func TestVirtualRenewals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, c, w := bubble(t)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		field, sent := hold(t, rdb, "lock", vlease)
		l := newLosses()
		if _, err := w.Watch(renewal("lock", field, vlease), sent, l.lost); err != nil {
			t.Fatal(err)
		}
		c.reset()
		const span = 10 * time.Minute
		for range span / time.Second {
			settle(time.Second)
			if ttl := m.TTL("lock"); ttl < vlease-vinterval || ttl > vlease {
				t.Fatalf("TTL %v at %v, want in [%v, %v]", ttl, time.Since(sent), vlease-vinterval, vlease)
			}
		}
		singles, pipes := c.snapshot()
		if want := int(span / vinterval); len(pipes) != want || len(singles) != 0 {
			t.Fatalf("%d pipelines and single commands %v in %v, want %d pipelines and none", len(pipes), singles, span, want)
		}
		for i, p := range pipes {
			if !p.ok || p.cmds != 1 {
				t.Fatalf("round %d: %d commands, ok=%v", i, p.cmds, p.ok)
			}
		}
		if n := l.count(); n != 0 {
			t.Fatalf("lost called %d times", n)
		}
	})
}

// A lock that disappears is reported at the next round, not later.
func TestVirtualGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, _, w := bubble(t)
		field, sent := hold(t, rdb, "lock", vlease)
		l := newLosses()
		if _, err := w.Watch(renewal("lock", field, vlease), sent, l.lost); err != nil {
			t.Fatal(err)
		}
		settle(vinterval + vinterval/2)
		m.Del("lock")
		got := l.await(t, vlease)
		if !errors.Is(got.reason, renew.ErrGone) {
			t.Fatalf("lost(%v), want ErrGone", got.reason)
		}
		if d := got.at.Sub(sent); d != 2*vinterval {
			t.Fatalf("lost called at %v, want %v (the first round after the delete)", d, 2*vinterval)
		}
		settle(5 * vinterval)
		if n := l.count(); n != 1 || w.Len() != 0 {
			t.Fatalf("lost called %d times, Len() = %d; want 1, 0", n, w.Len())
		}
	})
}

// When every renewal fails, the holder is told at the last successful
// renewal's send time plus 9/10 of the lease: while the server still
// holds the lock, never after it could have expired.
func TestVirtualExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, c, w := bubble(t)
		field, sent := hold(t, rdb, "lock", vlease)
		l := newLosses()
		if _, err := w.Watch(renewal("lock", field, vlease), sent, l.lost); err != nil {
			t.Fatal(err)
		}
		settle(3*vinterval + vinterval/2) // rounds at 10, 20 and 30 s succeed
		last := c.lastSuccess()
		if d := last.Sub(sent); d != 3*vinterval {
			t.Fatalf("last successful round sent at %v, want %v", d, 3*vinterval)
		}
		m.SetError("ERR simulated outage")
		got := l.await(t, vlease)
		m.SetError("")
		if !errors.Is(got.reason, renew.ErrExpired) {
			t.Fatalf("lost(%v), want ErrExpired", got.reason)
		}
		if d, want := got.at.Sub(last), vlease-vlease/10; d != want {
			t.Fatalf("lost called %v after the last successful renewal, want %v", d, want)
		}
		if ttl := m.TTL("lock"); ttl != vlease/10 {
			t.Fatalf("when lost was called the lock had TTL %v left on the server, want %v", ttl, vlease/10)
		}
		settle(5 * vinterval)
		if n := l.count(); n != 1 || w.Len() != 0 {
			t.Fatalf("lost called %d times, Len() = %d; want 1, 0", n, w.Len())
		}
	})
}

// Lease.Stop promises that lost is not called after it returns. Here two
// leases end in the same round (or the same expiry check) and the first
// one's lost callback stops the other, as a MultiLock releasing its other
// members would: the other's lost must then not be called.
func TestVirtualNoLossAfterLeaseStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(m *miniredis.Miniredis)
		want error
	}{
		{"gone", func(m *miniredis.Miniredis) { m.Del("a"); m.Del("b") }, renew.ErrGone},
		{"expired", func(m *miniredis.Miniredis) { m.SetError("ERR simulated outage") }, renew.ErrExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, rdb, _, w := bubble(t)
				var (
					mu      sync.Mutex
					leases  = map[string]*renew.Lease{}
					stopped = map[string]bool{}
					calls   []string
				)
				watch := func(name, other string) {
					field, sent := hold(t, rdb, name, vlease)
					l, err := w.Watch(renewal(name, field, vlease), sent, func(reason error) {
						mu.Lock()
						defer mu.Unlock()
						calls = append(calls, name)
						if stopped[name] {
							t.Errorf("lost(%v) called for lease %s after its Stop returned", reason, name)
						} else if !errors.Is(reason, tc.want) {
							t.Errorf("lost(%v) for %s, want %v", reason, name, tc.want)
						}
						leases[other].Stop()
						stopped[other] = true
					})
					if err != nil {
						t.Fatal(err)
					}
					mu.Lock()
					leases[name] = l
					mu.Unlock()
				}
				watch("a", "b")
				watch("b", "a")
				settle(vinterval / 2)
				tc.end(m)
				settle(vlease)
				mu.Lock()
				defer mu.Unlock()
				if len(calls) != 1 {
					t.Errorf("lost called for %v, want exactly one of the two leases", calls)
				}
				if w.Len() != 0 {
					t.Errorf("Len() = %d, want 0", w.Len())
				}
			})
		})
	}
}

// The schedule of the watchdog's own timeout outlives its last lease: a
// client that holds one lock at a time does not make it anew on every
// acquire. With no lease it sends nothing, and a lease that joins it is
// first renewed within an interval of its acquire.
func TestVirtualScheduleKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, c, w := bubble(t)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		field, sent := hold(t, rdb, "first", vlease)
		first, err := w.Watch(renewal("first", field, vlease), sent, newLosses().lost)
		if err != nil {
			t.Fatal(err)
		}
		settle(vinterval / 2)
		first.Stop()
		c.reset()
		settle(3 * vinterval)
		if singles, pipes := c.snapshot(); len(singles)+len(pipes) != 0 {
			t.Fatalf("with no lease the watchdog sent %v and %d pipelines", singles, len(pipes))
		}
		field, second := hold(t, rdb, "second", vlease)
		c.reset()
		l := newLosses()
		if _, err := w.Watch(renewal("second", field, vlease), second, l.lost); err != nil {
			t.Fatal(err)
		}
		settle(vinterval)
		if _, pipes := c.snapshot(); len(pipes) != 1 {
			t.Fatalf("%d pipelines an interval after the second lease started, want its first renewal", len(pipes))
		}
		for range 3 * vinterval / time.Second {
			settle(time.Second)
			if ttl := m.TTL("second"); ttl < vlease-vinterval || ttl > vlease {
				t.Fatalf("TTL %v, want in [%v, %v]", ttl, vlease-vinterval, vlease)
			}
		}
		if n := l.count(); n != 0 {
			t.Fatalf("lost called %d times", n)
		}
	})
}
