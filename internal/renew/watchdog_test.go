package renew_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A watched lock outlives its lease many times over, its TTL staying near
// the lease, and nobody is told it was lost.
func TestRenews(t *testing.T) {
	redistest.SkipShort(t, "real-time twin of TestVirtualRenewals, which runs")
	t.Parallel()
	rdb := srv.Client(t)
	const lease = 600 * time.Millisecond
	w := newWatchdog(t, rdb, lease)
	name := redistest.Key(t)
	field, sent := hold(t, rdb, name, lease)
	l := newLosses()
	if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
		t.Fatal(err)
	}
	if w.Len() != 1 {
		t.Fatalf("Len() = %d, want 1", w.Len())
	}

	var sum time.Duration
	samples := 0
	for time.Since(sent) < 3*time.Second {
		d := pttl(t, rdb, name)
		if d <= 0 || d > lease {
			t.Fatalf("PTTL %v after %v: want in (0, %v]", d, time.Since(sent).Round(time.Millisecond), lease)
		}
		sum += d
		samples++
		time.Sleep(20 * time.Millisecond)
	}
	// Renewed every lease/3, the TTL averages about 5/6 of the lease.
	if mean := sum / time.Duration(samples); mean < lease/2 {
		t.Fatalf("mean PTTL %v over %d samples, want at least %v", mean, samples, lease/2)
	}
	if n := l.count(); n != 0 {
		t.Fatalf("lost called %d times for a lock still held", n)
	}
	if w.Len() != 1 {
		t.Fatalf("Len() = %d, want 1", w.Len())
	}
}

// A renewal that finds the lock gone, or held by another owner, ends the
// lease with ErrGone, once, within about one renewal interval; other leases
// go on.
func TestLostWhenGone(t *testing.T) {
	redistest.SkipShort(t, "real-time twin of TestVirtualGone, which runs")
	const lease = 900 * time.Millisecond
	for _, tc := range []struct {
		name string
		take func(rdb *redis.Client, name, field string) error
	}{
		{"deleted", func(rdb *redis.Client, name, _ string) error {
			return rdb.Del(context.Background(), name).Err()
		}},
		{"expired", func(rdb *redis.Client, name, _ string) error {
			ctx := context.Background()
			if err := rdb.PExpire(ctx, name, time.Millisecond).Err(); err != nil {
				return err
			}
			for rdb.Exists(ctx, name).Val() == 1 {
				time.Sleep(time.Millisecond)
			}
			return nil
		}},
		{"other owner", func(rdb *redis.Client, name, field string) error {
			ctx := context.Background()
			_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.HDel(ctx, name, field)
				p.HSet(ctx, name, "another-client:7", 1)
				return nil
			})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rdb := srv.Client(t)
			w := newWatchdog(t, rdb, lease)
			name, other := redistest.Key(t), redistest.Key(t)
			field, sent := hold(t, rdb, name, lease)
			ofield, osent := hold(t, rdb, other, lease)
			l, ol := newLosses(), newLosses()
			if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Watch(renewal(other, ofield, lease), osent, ol.lost); err != nil {
				t.Fatal(err)
			}
			time.Sleep(lease / 2) // a renewal or so
			taken := time.Now()
			if err := tc.take(rdb, name, field); err != nil {
				t.Fatal(err)
			}
			got := l.await(t, wait)
			if !errors.Is(got.reason, renew.ErrGone) {
				t.Fatalf("lost(%v), want ErrGone", got.reason)
			}
			// The next round, at most lease/3 later, finds it gone.
			if d := got.at.Sub(taken); d > 2*time.Second {
				t.Fatalf("lost called %v after the lock went, want about %v", d, lease/3)
			}
			if w.Len() != 1 {
				t.Fatalf("Len() = %d after a loss, want 1", w.Len())
			}
			time.Sleep(lease) // three more rounds
			if n := l.count(); n != 1 {
				t.Fatalf("lost called %d times, want 1", n)
			}
			if n := ol.count(); n != 0 {
				t.Fatalf("the other lease was reported lost %d times", n)
			}
			if d := pttl(t, rdb, other); d <= 0 {
				t.Fatalf("the other lock is no longer renewed: PTTL %v", d)
			}
		})
	}
}

// Lease.Stop ends the renewals of that lease only, without calling lost;
// the lock then expires on the server. Stop is idempotent.
func TestLeaseStop(t *testing.T) {
	t.Parallel()
	rdb := srv.Client(t)
	const lease = 600 * time.Millisecond
	w := newWatchdog(t, rdb, lease)
	a, b := redistest.Key(t), redistest.Key(t)
	af, as := hold(t, rdb, a, lease)
	bf, bs := hold(t, rdb, b, lease)
	al, bl := newLosses(), newLosses()
	la, err := w.Watch(renewal(a, af, lease), as, al.lost)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := w.Watch(renewal(b, bf, lease), bs, bl.lost)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease / 2)
	la.Stop()
	stopped := time.Now()
	la.Stop()
	if w.Len() != 1 {
		t.Fatalf("Len() = %d after stopping one of two leases, want 1", w.Len())
	}
	redistest.Eventually(t, lease+wait, "the stopped lock expires", func() bool { return pttl(t, rdb, a) == -2 })
	if d := time.Since(stopped); d < lease/3 {
		t.Fatalf("the stopped lock expired %v after Stop: it was not holding its last renewal", d)
	}
	time.Sleep(lease / 2)
	if n := al.count(); n != 0 {
		t.Fatalf("lost called %d times after Stop", n)
	}
	if d := pttl(t, rdb, b); d <= 0 {
		t.Fatalf("the other lock is no longer renewed: PTTL %v", d)
	}
	lb.Stop()
	lb.Stop()
	if w.Len() != 0 {
		t.Fatalf("Len() = %d, want 0", w.Len())
	}
	if n := bl.count(); n != 0 {
		t.Fatalf("lost called %d times for the other lease", n)
	}
}

// A lease watched with an acquire time already a lease ago (a slow
// acquire reply) is reported expired promptly, though its lock still
// exists: the holder cannot know it kept it.
func TestWatchStaleAcquire(t *testing.T) {
	t.Parallel()
	rdb := srv.Client(t)
	const lease = 900 * time.Millisecond
	w := newWatchdog(t, rdb, lease)
	name := redistest.Key(t)
	field, _ := hold(t, rdb, name, lease)
	l := newLosses()
	start := time.Now()
	if _, err := w.Watch(renewal(name, field, lease), start.Add(-lease), l.lost); err != nil {
		t.Fatal(err)
	}
	got := l.await(t, wait)
	if !errors.Is(got.reason, renew.ErrExpired) {
		t.Fatalf("lost(%v), want ErrExpired", got.reason)
	}
	if d := got.at.Sub(start); d > 2*time.Second {
		t.Fatalf("stale lease reported %v after Watch", d)
	}
	if w.Len() != 0 {
		t.Fatalf("Len() = %d, want 0", w.Len())
	}
}

// When Redis stops answering, each lease is reported lost with ErrExpired
// before the server could have expired it: no later than the send time of
// its last successful renewal plus the lease.
func TestUnreachable(t *testing.T) {
	redistest.SkipShort(t, "real-time twin of TestVirtualExpiry, which runs")
	for _, tc := range []struct {
		name string
		cut  func(*redistest.Server) error
	}{
		{"paused", (*redistest.Server).Pause},
		{"killed", func(s *redistest.Server) error { s.Kill(); return nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each on a server of its own
			s := startServer(t)
			rdb, c, _ := hookedClient(t, s, nil)
			admin := s.Client(t)
			const lease = 1200 * time.Millisecond
			if err := scriptsLoaded(admin); err != nil {
				t.Fatal(err)
			}
			w := newWatchdog(t, rdb, lease)
			name := redistest.Key(t)
			field, sent := hold(t, admin, name, lease)
			l := newLosses()
			if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
				t.Fatal(err)
			}
			redistest.Eventually(t, wait, "a renewal succeeds", func() bool { return c.lastSuccess().After(sent) })
			if n := l.count(); n != 0 {
				t.Fatalf("lost called %d times while Redis answered", n)
			}

			cut := time.Now()
			if err := tc.cut(s); err != nil {
				t.Fatal(err)
			}
			got := l.await(t, lease+wait)
			if !errors.Is(got.reason, renew.ErrExpired) {
				t.Fatalf("lost(%v), want ErrExpired", got.reason)
			}
			last := c.lastSuccess()
			if last.After(cut) {
				t.Fatalf("a renewal succeeded at %v, after Redis was cut at %v", last, cut)
			}
			// The server keeps the lock at least until the last
			// successful renewal's send time plus the lease; the hook
			// sees that send a little after the watchdog stamps it.
			if d := got.at.Sub(last); d > lease {
				t.Fatalf("lost called %v after the last successful renewal was sent, later than the lease %v", d, lease)
			}
			if d := got.at.Sub(cut); d < 0 || d > lease {
				t.Fatalf("lost called %v after Redis was cut, want within [0, %v]", d, lease)
			}
			if w.Len() != 0 {
				t.Fatalf("Len() = %d after the loss, want 0", w.Len())
			}
			if err := s.Resume(); err != nil && tc.name == "paused" {
				t.Fatal(err)
			}
			time.Sleep(lease / 2) // the stalled round comes back
			if n := l.count(); n != 1 {
				t.Fatalf("lost called %d times, want 1", n)
			}
		})
	}
}

// scriptsLoaded makes the renew script's EVALSHA succeed from the start,
// so that tests counting commands see no NOSCRIPT fallback.
func scriptsLoaded(rdb *redis.Client) error {
	return renewal("", "", 0).Script.Load(context.Background(), rdb).Err()
}

// One round renews every lease in one pipeline: 1000 leases cost one
// round trip per round, not 1000, and no single commands. The lease is
// 1.2s (600ms under -short).
func TestBatching(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rdb, c, name := hookedClient(t, s, nil)
	admin := s.Client(t)
	if err := scriptsLoaded(admin); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	lease := redistest.Short(1200*time.Millisecond, 600*time.Millisecond)
	w := newWatchdog(t, rdb, lease)
	l := newLosses()
	names, sent := holdWatched(t, admin, w, l, n, "batch-client:1", lease)
	// Measure from the end of the first round on, past the connection's
	// set-up commands (HELLO, CLIENT SETNAME).
	redistest.Eventually(t, wait, "a first round", func() bool {
		_, pipes := c.snapshot()
		return len(pipes) > 0 && pipes[len(pipes)-1].names["evalsha"] > 0
	})
	c.reset()
	before := commandCalls(t, admin, "evalsha")
	start := time.Now()
	time.Sleep(2*lease - lease/6) // about 5.5 intervals: 5 rounds
	ttls := pttls(t, admin, names)
	elapsed := time.Since(start)
	singles, pipes := c.snapshot()
	after := commandCalls(t, admin, "evalsha")

	for i, cmd := range ttls {
		if d := cmd.Val(); d <= 0 {
			t.Fatalf("lock %d not renewed: PTTL %v %v after the acquire", i, d, time.Since(sent))
		}
	}
	if len(singles) != 0 {
		t.Fatalf("renewal rounds sent single commands %v, want none", singles)
	}
	rounds := int(elapsed / (lease / 3))
	if len(pipes) < 2 || len(pipes) > rounds+1 {
		for _, p := range pipes {
			t.Logf("pipeline at %v..%v: %d commands %v, error %v", p.start.Sub(start).Round(time.Millisecond),
				p.end.Sub(start).Round(time.Millisecond), p.cmds, p.names, p.err)
		}
		t.Fatalf("%d pipelines in %v, want 2..%d (one per round of %v)", len(pipes), elapsed, rounds+1, lease/3)
	}
	evalshas := 0
	for i, p := range pipes {
		if p.cmds != n || p.names["evalsha"] != n || !p.ok {
			t.Fatalf("pipeline %d: %d commands %v, ok=%v; want %d successful evalsha", i, p.cmds, p.names, p.ok, n)
		}
		evalshas += p.cmds
	}
	// The server ran the renewals the pipelines carried, give or take a
	// round in flight at either end of the window.
	if got := after - before; got < int64(evalshas-n) || got > int64(evalshas+n) {
		t.Fatalf("server counted %d EVALSHA calls, the client sent %d in %d pipelines", got, evalshas, len(pipes))
	}
	conns := 0
	for _, line := range clientLines(t, admin) {
		if line["name"] == name {
			conns++
		}
	}
	if conns != 1 {
		t.Fatalf("watchdog client holds %d server connections, want 1", conns)
	}
	if k := l.count(); k != 0 {
		t.Fatalf("lost called %d times", k)
	}
}

// clientLines parses CLIENT LIST.
func clientLines(t *testing.T, rdb *redis.Client) []map[string]string {
	t.Helper()
	out, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	var lines []map[string]string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		m := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		lines = append(lines, m)
	}
	return lines
}

// After SCRIPT FLUSH (as after a restart or failover) renewals fall back
// to EVAL and go on succeeding.
func TestNoScript(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rdb, c, _ := hookedClient(t, s, nil)
	admin := s.Client(t)
	const lease = 900 * time.Millisecond
	w := newWatchdog(t, rdb, lease)
	name := redistest.Key(t)
	field, sent := hold(t, admin, name, lease)
	l := newLosses()
	if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, wait, "a renewal succeeds", func() bool { return c.lastSuccess().After(sent) })
	ctx := context.Background()
	if err := admin.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	flushed := time.Now()
	evals := commandCalls(t, admin, "eval")
	redistest.Eventually(t, wait, "a renewal falls back to EVAL", func() bool { return commandCalls(t, admin, "eval") > evals })
	redistest.Eventually(t, wait, "a renewal succeeds after the flush", func() bool { return c.lastSuccess().After(flushed) })
	if ok, err := admin.ScriptExists(ctx, renewal("", "", 0).Script.Hash()).Result(); err != nil || !ok[0] {
		t.Fatalf("SCRIPT EXISTS after the fallback = %v, %v; want the script cached again", ok, err)
	}
	time.Sleep(lease)
	if d := pttl(t, admin, name); d <= 0 {
		t.Fatalf("lock not renewed after SCRIPT FLUSH: PTTL %v", d)
	}
	if n := l.count(); n != 0 {
		t.Fatalf("lost called %d times", n)
	}
}

// A server restarted empty has lost the lock (and the script): the
// renewal's EVAL fallback finds it gone and reports ErrGone.
func TestRestartLosesLock(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	rdb := s.Client(t)
	const lease = 3 * time.Second
	w := newWatchdog(t, rdb, lease)
	name := redistest.Key(t)
	field, sent := hold(t, rdb, name, lease)
	l := newLosses()
	if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	got := l.await(t, lease+wait)
	if !errors.Is(got.reason, renew.ErrGone) {
		t.Fatalf("lost(%v), want ErrGone", got.reason)
	}
}

// Close ends every lease without calling lost, waits for the watchdog's
// goroutines, and is idempotent; Watch after Close fails with ErrClosed.
func TestClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// The client closes before the leak check: on the miniredis fallback,
	// its connections have server goroutines in this process.
	rdb := srv.NewClient()
	defer rdb.Close()
	const lease = 600 * time.Millisecond
	w := renew.New(rdb, lease, nil)
	l := newLosses()
	var names []string
	var leases []*renew.Lease
	for range 3 {
		name := redistest.Key(t)
		field, sent := hold(t, rdb, name, lease)
		lease, err := w.Watch(renewal(name, field, lease), sent, l.lost)
		if err != nil {
			t.Fatal(err)
		}
		names, leases = append(names, name), append(leases, lease)
	}
	time.Sleep(lease / 2)
	for i := range 2 {
		if err := w.Close(); err != nil {
			t.Fatalf("Close #%d: %v", i+1, err)
		}
	}
	if w.Len() != 0 {
		t.Fatalf("Len() = %d after Close, want 0", w.Len())
	}
	if _, err := w.Watch(renewal(names[0], "f", lease), time.Now(), l.lost); !errors.Is(err, renew.ErrClosed) {
		t.Fatalf("Watch after Close = %v, want ErrClosed", err)
	}
	for _, le := range leases {
		le.Stop()
	}
	redistest.Eventually(t, lease+wait, "the locks expire without renewals", func() bool {
		n, err := rdb.Exists(context.Background(), names...).Result()
		return err == nil && n == 0
	})
	if n := l.count(); n != 0 {
		t.Fatalf("lost called %d times after Close", n)
	}
}

// lost is never called once Watchdog.Close has returned, even when Close
// races with rounds that find the locks gone. Under -short it tries every
// other phase.
func TestNoLossAfterClose(t *testing.T) {
	redistest.Parallel(t)
	rdb := srv.Client(t)
	const lease = 300 * time.Millisecond
	for i := 0; i < 10; i += redistest.Short(1, 2) {
		w := renew.New(rdb, lease, nil)
		var closed atomic.Bool
		var late atomic.Int64
		lost := func(error) {
			if closed.Load() {
				late.Add(1)
			}
		}
		var names []string
		for range 20 {
			name := redistest.Key(t)
			field, sent := hold(t, rdb, name, lease)
			if _, err := w.Watch(renewal(name, field, lease), sent, lost); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
		time.Sleep(time.Duration(i) * lease / 20)
		if err := rdb.Del(context.Background(), names...).Err(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i) * lease / 30)
		_ = w.Close()
		closed.Store(true)
		time.Sleep(lease / 3)
		if n := late.Load(); n != 0 {
			t.Fatalf("try %d: lost called %d times after Close returned", i, n)
		}
	}
}

// A lost callback may stop its own lease and query the watchdog, as a
// client ending a hold does, without deadlock.
func TestLostMayCallBack(t *testing.T) {
	t.Parallel()
	rdb := srv.Client(t)
	const lease = 600 * time.Millisecond
	w := newWatchdog(t, rdb, lease)
	name := redistest.Key(t)
	field, sent := hold(t, rdb, name, lease)
	var mu sync.Mutex
	var lease1 *renew.Lease
	done := make(chan int, 1)
	mu.Lock()
	lease1, err := w.Watch(renewal(name, field, lease), sent, func(error) {
		mu.Lock()
		defer mu.Unlock()
		lease1.Stop()
		done <- w.Len()
	})
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.Del(context.Background(), name).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-done:
		if n != 0 {
			t.Fatalf("Len() inside lost = %d, want 0", n)
		}
	case <-time.After(wait):
		t.Fatal("lost did not complete: a callback into the watchdog deadlocked")
	}
}
