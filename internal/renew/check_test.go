package renew_test

import (
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"github.com/relock-go/relock/internal/renew"
)

// errHint is the reason a check's caller gives for a loss it finds.
var errHint = errors.New("force-unlocked")

// A Check renews at once, between rounds, and a lock it finds gone is
// reported then, with the check's reason.
func TestVirtualCheckGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, c, w := bubble(t)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		field, sent := hold(t, rdb, "lock", vlease)
		l := newLosses()
		lease, err := w.Watch(renewal("lock", field, vlease), sent, l.lost)
		if err != nil {
			t.Fatal(err)
		}
		settle(vinterval / 2)
		c.reset()
		m.Del("lock")
		checked := time.Now()
		lease.Check(errHint)
		settle(0)
		if l.count() != 1 {
			t.Fatalf("lost called %d times right after the check, want 1", l.count())
		}
		got := l.all()[0]
		if !errors.Is(got.reason, errHint) || got.at != checked {
			t.Fatalf("lost(%v) %v after the check, want the check's reason at once", got.reason, got.at.Sub(checked))
		}
		if _, pipes := c.snapshot(); len(pipes) != 1 || pipes[0].cmds != 1 {
			t.Fatalf("%d pipelines for the check, want one of one renewal", len(pipes))
		}
		settle(2 * vlease)
		if n := l.count(); n != 1 || w.Len() != 0 {
			t.Fatalf("lost called %d times, Len() = %d; want 1, 0", n, w.Len())
		}
	})
}

// A Check of a lock still held renews it and ends nothing: the hint was
// stale. A loss found later is not the hint's.
func TestVirtualCheckHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, c, w := bubble(t)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		field, sent := hold(t, rdb, "lock", vlease)
		l := newLosses()
		lease, err := w.Watch(renewal("lock", field, vlease), sent, l.lost)
		if err != nil {
			t.Fatal(err)
		}
		settle(vinterval / 2)
		c.reset()
		lease.Check(errHint)
		settle(0)
		if _, pipes := c.snapshot(); len(pipes) != 1 || !pipes[0].ok {
			t.Fatalf("%d pipelines for the check, want one that renewed", len(pipes))
		}
		if ttl := m.TTL("lock"); ttl != vlease {
			t.Fatalf("TTL %v after the check, want %v", ttl, vlease)
		}
		if n := l.count(); n != 0 {
			t.Fatalf("lost called %d times for a lock held", n)
		}
		m.Del("lock")
		got := l.await(t, vlease)
		if !errors.Is(got.reason, renew.ErrGone) {
			t.Fatalf("lost(%v) after a stale check, want ErrGone", got.reason)
		}
	})
}

// Checks of several leases made together share one round, which renews
// those leases alone; a Check of a stopped lease sends nothing.
func TestVirtualCheckBatch(t *testing.T) {
	// "Together": a Check wakes the watchdog's goroutine at once, and on
	// a second processor it could take the first Check's lease alone
	// before the test goroutine makes the next. On one, it runs once the
	// test goroutine waits (settle).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	synctest.Test(t, func(t *testing.T) {
		_, rdb, c, w := bubble(t)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		l := newLosses()
		var leases []*renew.Lease
		for _, name := range []string{"a", "b", "c", "d"} {
			field, sent := hold(t, rdb, name, vlease)
			lease, err := w.Watch(renewal(name, field, vlease), sent, l.lost)
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, lease)
		}
		settle(vinterval / 2)
		c.reset()
		leases[0].Check(errHint)
		leases[1].Check(errHint)
		leases[1].Check(errHint)
		settle(0)
		if _, pipes := c.snapshot(); len(pipes) != 1 || pipes[0].cmds != 2 || !pipes[0].ok {
			t.Fatalf("pipelines %+v for two leases' checks, want one of their two renewals", pipes)
		}
		c.reset()
		leases[2].Stop()
		leases[2].Check(errHint)
		settle(0)
		if singles, pipes := c.snapshot(); len(pipes) != 0 || len(singles) != 0 {
			t.Fatalf("a stopped lease's check sent %v and %d pipelines, want nothing", singles, len(pipes))
		}
		if n := l.count(); n != 0 {
			t.Fatalf("lost called %d times", n)
		}
	})
}
