package renew_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A slowHook makes a server slow and faulty for pipelines of renewals:
// each takes perCmd a renewal before it is sent (cut short by its
// context), and fault, if set, may fail it ("fail") or stall it until
// its context ends ("stall"). It records each one's start and size.
type slowHook struct {
	perCmd time.Duration
	fault  func(time.Time) string

	mu    sync.Mutex
	sizes []int
	at    []time.Time
	fails int
}

var errInjected = errors.New("injected batch failure")

func (h *slowHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *slowHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *slowHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || !strings.HasPrefix(cmds[0].Name(), "eval") {
			return next(ctx, cmds)
		}
		now := time.Now()
		h.mu.Lock()
		h.sizes = append(h.sizes, len(cmds))
		h.at = append(h.at, now)
		h.mu.Unlock()
		fault := ""
		if h.fault != nil {
			fault = h.fault(now)
		}
		wait := time.Duration(len(cmds)) * h.perCmd
		if fault == "stall" {
			wait = 24 * time.Hour
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return fail(cmds, ctx.Err())
			case <-t.C:
			}
		}
		if fault == "fail" {
			h.mu.Lock()
			h.fails++
			h.mu.Unlock()
			return fail(cmds, errInjected)
		}
		return next(ctx, cmds)
	}
}

// fail sets err on every command of a pipeline that is not sent.
func fail(cmds []redis.Cmder, err error) error {
	for _, c := range cmds {
		c.SetErr(err)
	}
	return err
}

func (h *slowHook) snapshot() (sizes []int, at []time.Time, fails int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.sizes), slices.Clone(h.at), h.fails
}

// holdMany writes n locks straight into m, as hold does, and returns
// their names, the field and the time stood for their acquire.
func holdMany(m *miniredis.Miniredis, prefix string, n int, lease time.Duration) ([]string, string, time.Time) {
	const field = "5b7e3f7e-8d4a-4c1e-9d0b-2f6f0d1c3a44:1"
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s:%d", prefix, i)
		m.HSet(names[i], field, "1")
		m.SetTTL(names[i], lease)
	}
	return names, field, time.Now()
}

// watchAll watches every lock of names, acquired at sent.
func watchAll(t *testing.T, w *renew.Watchdog, names []string, field string, sent time.Time, l *losses) {
	t.Helper()
	for _, nm := range names {
		if _, err := w.Watch(renewal(nm, field, vlease), sent, l.lost); err != nil {
			t.Fatal(err)
		}
	}
}

// checkHeld fails the test unless every lock of names has a TTL.
func checkHeld(t *testing.T, m *miniredis.Miniredis, names []string) {
	t.Helper()
	for _, nm := range names {
		if ttl := m.TTL(nm); ttl <= 0 {
			t.Fatalf("%s not renewed: TTL %v", nm, ttl)
		}
	}
}

// A Redis so slow that renewing every lease of the client takes one and
// a half intervals loses no lease: the renewals go in batches of at most
// the batch size, each well within its deadline (0.6 of an interval),
// rather than in one round cut off at the interval, which would fail
// every renewal, every retry too, until every lease was lost.
func TestSlowRedis(t *testing.T) {
	redistest.SkipShort(t, "it holds 5000 leases for two and a half leases")
	srv.RequireReal(t)
	t.Parallel()
	rdb, _, _ := hookedClient(t, srv, nil)
	admin := srv.Client(t)
	if err := scriptsLoaded(admin); err != nil {
		t.Fatal(err)
	}
	const (
		n     = 2*renew.DefaultBatchSize + renew.DefaultBatchSize/2
		lease = 3 * time.Second
	)
	h := &slowHook{perCmd: lease / 2 / n}
	rdb.AddHook(h)
	w := newWatchdog(t, rdb, lease)
	l := newLosses()
	names, sent := holdWatched(t, admin, w, l, n, "slow-client:1", lease)
	time.Sleep(5 * lease / 2)
	if k := l.count(); k != 0 {
		t.Fatalf("%d of %d leases lost, the first: %v", k, n, l.all()[0].reason)
	}
	ttls := pttls(t, admin, names)
	for i, cmd := range ttls {
		if d := cmd.Val(); d <= 0 {
			t.Fatalf("lock %d not renewed: PTTL %v %v after the acquire", i, d, time.Since(sent))
		}
	}
	sizes, _, _ := h.snapshot()
	for _, s := range sizes {
		if s > renew.DefaultBatchSize {
			t.Fatalf("a batch of %d renewals, want at most %d", s, renew.DefaultBatchSize)
		}
	}
}

// Virtual tests keep batches small: a pipeline of many commands on
// miniredis's in-memory connection stalls, as neither end reads while the
// other writes.

// Leases acquired at one instant are renewed in batches spread evenly
// over the interval, one a phase, each of at most the batch size, rather
// than in one burst an interval.
func TestVirtualSpread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, rdb, _, w := bubble(t)
		if err := scriptsLoaded(rdb); err != nil {
			t.Fatal(err)
		}
		const size, phases = 10, 16
		if err := w.SetBatchSize(size); err != nil {
			t.Fatal(err)
		}
		h := &slowHook{}
		rdb.AddHook(h)
		names, field, sent := holdMany(m, "spread", size*phases, vlease)
		l := newLosses()
		watchAll(t, w, names, field, sent, l)
		settle(2 * vinterval)
		from := time.Now()
		settle(vinterval)
		sizes, at, _ := h.snapshot()
		var in []time.Time
		for i, a := range at {
			if sizes[i] != size {
				t.Fatalf("a batch of %d renewals at %v, want %d", sizes[i], a.Sub(sent), size)
			}
			if !a.Before(from) && a.Before(from.Add(vinterval)) {
				in = append(in, a)
			}
		}
		if len(in) != phases {
			t.Fatalf("%d batches in an interval, want %d", len(in), phases)
		}
		for i := 1; i < len(in); i++ {
			if gap := in[i].Sub(in[i-1]); gap != vinterval/phases {
				t.Fatalf("batch %d came %v after the one before, want %v", i, gap, vinterval/phases)
			}
		}
		if k := l.count(); k != 0 {
			t.Fatalf("%d leases lost", k)
		}
		checkHeld(t, m, names)
	})
}

// A batch that fails, or overruns its deadline, is retried while its
// leases last: an outage of an interval and a half in which every batch
// fails at once costs no lease, the retries coming a retry wait (a fifth
// of an interval) apart; nor does one in which every batch sent hangs
// until its deadline (an interval on), each slot's batch retried as soon
// as it is cut off.
func TestVirtualBatchRetried(t *testing.T) {
	for _, tc := range []struct {
		fault      string
		start, end time.Duration // of the outage, from the acquire
	}{
		{"fail", vinterval + time.Second, vinterval + time.Second + 3*vinterval/2},
		{"stall", vinterval / 3, vinterval + time.Second},
	} {
		fault := tc.fault
		t.Run(fault, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m, rdb, _, w := bubble(t)
				if err := scriptsLoaded(rdb); err != nil {
					t.Fatal(err)
				}
				const size = 10
				if err := w.SetBatchSize(size); err != nil {
					t.Fatal(err)
				}
				names, field, sent := holdMany(m, "retried", 3*size, vlease)
				start, end := sent.Add(tc.start), sent.Add(tc.end)
				h := &slowHook{fault: func(at time.Time) string {
					if !at.Before(start) && at.Before(end) {
						return fault
					}
					return ""
				}}
				rdb.AddHook(h)
				l := newLosses()
				watchAll(t, w, names, field, sent, l)
				settle(3 * vlease)
				if k := l.count(); k != 0 {
					t.Fatalf("%d leases lost, the first: %v", k, l.all()[0].reason)
				}
				checkHeld(t, m, names)
				sizes, at, fails := h.snapshot()
				var during []time.Time
				for i, a := range at {
					if sizes[i] > size {
						t.Fatalf("a batch of %d renewals, want at most %d", sizes[i], size)
					}
					if !a.Before(start) && a.Before(end) {
						during = append(during, a)
					}
				}
				if fault == "fail" && fails != len(during) {
					t.Fatalf("%d batches failed, %d sent during the outage", fails, len(during))
				}
				// The 3 slots' batches, and for failures their retries.
				if min := 3; len(during) < min {
					t.Fatalf("%d batches during the outage, want at least %d", len(during), min)
				}
			})
		})
	}
}
