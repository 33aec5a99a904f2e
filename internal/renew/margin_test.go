package renew_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/relock-go/relock/internal/renew"
)

// SetMargin takes a margin in [0, timeout/2) and refuses the rest.
func TestSetMarginRange(t *testing.T) {
	w := newWatchdog(t, srv.Client(t), vlease)
	for _, tc := range []struct {
		margin time.Duration
		ok     bool
	}{
		{-time.Nanosecond, false},
		{0, true},
		{time.Second, true},
		{vlease/2 - time.Nanosecond, true},
		{vlease / 2, false},
		{vlease, false},
	} {
		if err := w.SetMargin(tc.margin); (err == nil) != tc.ok {
			t.Errorf("SetMargin(%v) = %v, want ok %v", tc.margin, err, tc.ok)
		}
	}
}

// With a margin set, a lease no renewal reaches is reported lost exactly
// that margin before the last successful renewal's send time plus the
// lease, while the server still holds the lock for the margin.
func TestVirtualMargin(t *testing.T) {
	const margin = 2 * time.Second
	synctest.Test(t, func(t *testing.T) {
		m, rdb, c, w := bubble(t)
		if err := w.SetMargin(margin); err != nil {
			t.Fatal(err)
		}
		field, sent := hold(t, rdb, "lock", vlease)
		l := newLosses()
		if _, err := w.Watch(renewal("lock", field, vlease), sent, l.lost); err != nil {
			t.Fatal(err)
		}
		settle(vinterval + vinterval/2) // the round at 10 s succeeds
		last := c.lastSuccess()
		m.SetError("ERR simulated outage")
		got := l.await(t, vlease)
		// The TTL is read while the outage lasts: a renewal still in
		// flight would otherwise reset it once the error is gone.
		ttl := m.TTL("lock")
		m.SetError("")
		if !errors.Is(got.reason, renew.ErrExpired) {
			t.Fatalf("lost(%v), want ErrExpired", got.reason)
		}
		if d, want := got.at.Sub(last), vlease-margin; d != want {
			t.Fatalf("lost called %v after the last successful renewal, want %v", d, want)
		}
		if ttl != margin {
			t.Fatalf("when lost was called the lock had TTL %v left on the server, want %v", ttl, margin)
		}
	})
}

// A lease whose deadline comes before the watchdog's expiry timer would
// fire (an acquire sent long ago, a wide margin) is still reported at its
// deadline, not at the timer's next tick: Watch sets the timer again.
func TestVirtualMarginEarlyDeadline(t *testing.T) {
	const margin = vlease/2 - time.Second
	synctest.Test(t, func(t *testing.T) {
		m, rdb, _, w := bubble(t)
		if err := w.SetMargin(margin); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the timer is set for the first round, 10 s on
		field, _ := hold(t, rdb, "lock", vlease)
		m.SetError("ERR simulated outage")
		defer m.SetError("")
		acquired := time.Now().Add(-vinterval)
		l := newLosses()
		if _, err := w.Watch(renewal("lock", field, vlease), acquired, l.lost); err != nil {
			t.Fatal(err)
		}
		got := l.await(t, vlease)
		if !errors.Is(got.reason, renew.ErrExpired) {
			t.Fatalf("lost(%v), want ErrExpired", got.reason)
		}
		if d, want := got.at.Sub(acquired), vlease-margin; d != want {
			t.Fatalf("lost called %v after the acquire, want %v", d, want)
		}
	})
}
