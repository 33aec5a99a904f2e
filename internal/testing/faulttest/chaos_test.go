package faulttest_test

import (
	"context"
	"math/rand"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// chaos injects faults until done: latency changes, brief partitions of
// a client (sometimes long enough to lose a lease) and pauses of a
// holder in a long hold (a partition past its lease, so its watchdog
// must tell it). One fault at a time; latency stays until changed.
func chaos(t *testing.T, cfg run, proxies []*proxy, holding []atomic.Bool, stats *runStats, done <-chan struct{}) {
	r := rand.New(rand.NewSource(cfg.Seed - 1))
	sleep := func(d time.Duration) bool {
		select {
		case <-done:
			return false
		case <-time.After(d):
			return true
		}
	}
	partition := func(c int, d time.Duration) bool {
		if err := proxies[c].Partition(); err != nil {
			t.Error(err)
			return false
		}
		stats.Partitions.Add(1)
		stats.PartitionTime.Add(int64(d))
		if d > cfg.Watchdog*9/10 {
			stats.LongPartitions.Add(1)
		}
		// Heal even when the run is over, then stop.
		ok := sleep(d)
		if err := proxies[c].Heal(); err != nil {
			t.Error(err)
			return false
		}
		return ok
	}
	for sleep(time.Duration(100+r.Intn(300)) * time.Millisecond) {
		c := r.Intn(len(proxies))
		switch x := r.Float64(); {
		case x < 0.35:
			lat := time.Duration(0)
			if r.Intn(3) > 0 {
				lat = time.Duration(2+r.Intn(29)) * time.Millisecond
			}
			if err := proxies[c].SetLatency(lat, lat/2); err != nil {
				t.Error(err)
				return
			}
			stats.LatencyChanges.Add(1)
		case x < 0.65:
			if !partition(c, time.Duration(50+r.Intn(int(3*cfg.Watchdog/2/time.Millisecond)))*time.Millisecond) {
				return
			}
		default:
			// Pause the next client seen holding a lock, looking for up
			// to 2s: a pause that finds nobody holding tests nothing.
			if !pauseHolder(c, func(c int) bool {
				stats.HolderPauses.Add(1)
				return partition(c, cfg.Watchdog*3/2)
			}, holding, sleep) {
				return
			}
		}
	}
}

// pauseHolder calls pause for the first client, from c on, found holding
// a lock, looking every 20ms for up to 2s. It reports false when the run
// is over.
func pauseHolder(c int, pause func(int) bool, holding []atomic.Bool, sleep func(time.Duration) bool) bool {
	for range 100 {
		for k := range holding {
			if h := (c + k) % len(holding); holding[h].Load() {
				return pause(h)
			}
		}
		if !sleep(20 * time.Millisecond) {
			return false
		}
	}
	return true
}

// TestHistoryUnderFaults: 8 Clients, each behind its own proxy, take 500
// fenced reentrant locks each (4000 acquisitions) over two lock names
// while a chaos goroutine changes latencies, partitions clients (some
// long enough to lose a lease) and pauses holders (a partition past the
// lease during a long hold; fixed-lease clients sleep past their lease).
// The history is linearizable against a mutex, and fencing tokens
// increase in grant order.
//
// Six clients renew with the watchdog (WatchdogTimeout 1s: a holder is
// told of a loss 100ms before the server may expire its lock, enough
// for the scheduling delays of this shared 2-core machine; see
// TestPartitionedHolderToldFirst); two use a fixed 300ms lease, whose
// end is exact (the context's deadline). A hold ends, for the checker,
// at the earlier of the Unlock call and the end of the lock context.
// The seed fixes the faults' schedule and every client's choices, not
// the timing, so a rerun with it is similar, not identical.
func TestHistoryUnderFaults(t *testing.T) {
	requireReal(t)
	seed := time.Now().UnixNano()
	if s := getenvInt("RELOCK_FAULT_SEED"); s != 0 {
		seed = s
	}
	cfg := run{
		Clients: 8, PerClient: 500, Locks: 2,
		Watchdog: time.Second, FixedClients: 2, FixedLease: 300 * time.Millisecond,
		Chaos: true, Seed: seed, LongProb: 0.003, PauseProb: 0.01,
	}
	t.Logf("seed %d (rerun with RELOCK_FAULT_SEED=%d)", seed, seed)
	h, stats, took := cfg.history(t)
	t.Logf("run: %v; %v", took.Round(time.Millisecond), stats)
	v := check(h, 60*time.Second)
	t.Logf("checker: %v", v)
	if v.Linearizable != porcupine.Ok || v.Overlap != "" {
		t.Errorf("history of %d acquisitions is not that of a mutex: %v", len(h), v)
	}
	if v.TokenOrder != "" {
		t.Errorf("fencing tokens out of grant order: %s", v.TokenOrder)
	}
	if want := int64(cfg.Clients * cfg.PerClient); stats.Acquisitions.Load()+stats.LockErrors.Load() != want {
		t.Errorf("%d acquisitions and %d failed Locks, want %d attempts", stats.Acquisitions.Load(), stats.LockErrors.Load(), want)
	}
	// The faults did bite: some holders lost their lease to a partition
	// and some fixed leases ran out under a paused holder.
	if stats.LostHolds.Load() == 0 || stats.DeadlineEnds.Load() == 0 {
		t.Errorf("no lease lost (%d) or no fixed lease run out (%d): the run tested too little", stats.LostHolds.Load(), stats.DeadlineEnds.Load())
	}
}

func getenvInt(name string) int64 {
	n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
	return n
}

// noLock locks nothing: Lock succeeds at once. Its tokens increase.
type noLock struct{ tokens *atomic.Int64 }

func (n noLock) Lock(ctx context.Context) (context.Context, error) { return ctx, nil }
func (n noLock) Unlock(context.Context) error                      { return nil }
func (n noLock) Token(context.Context) (int64, error)              { return n.tokens.Add(1), nil }

// staleToken is a real lock whose Token always reports the same value,
// as a client that reused a token would.
type staleToken struct{ *reentrant.Mutex }

func (staleToken) Token(context.Context) (int64, error) { return 7, nil }

// TestHistoryCatchesBrokenLocks: the checker is not vacuous. It fails a
// history of a lock with a fixed 20ms lease whose holders keep working
// for 50ms ignoring their context, of a lock that locks nothing, and of
// a real lock whose fencing tokens do not increase.
func TestHistoryCatchesBrokenLocks(t *testing.T) {
	requireReal(t)
	seed := time.Now().UnixNano()
	tokens := new(atomic.Int64)
	for _, tc := range []struct {
		name        string
		cfg         run
		wantOverlap bool
		wantTokens  int // 1: a token order violation; 0: none; -1: either
	}{
		{"lease ignored", run{FixedClients: 4, FixedLease: 20 * time.Millisecond, IgnoreLoss: true, Hold: 50 * time.Millisecond}, true, 0},
		// Overlapping holds have no grant order; their tokens may look
		// out of order or not.
		{"no lock", run{NewLock: func(*relock.Client, string, time.Duration) lockUnderTest {
			return noLock{tokens: tokens}
		}}, true, -1},
		{"stale token", run{NewLock: func(rc *relock.Client, name string, _ time.Duration) lockUnderTest {
			return staleToken{reentrant.New(rc, name, nil)}
		}}, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Clients, cfg.PerClient, cfg.Locks, cfg.Seed, cfg.Watchdog = 4, 25, 1, seed, 10*time.Second
			h, stats, took := cfg.history(t)
			v := check(h, 30*time.Second)
			t.Logf("seed %d, %v: %v; checker: %v", seed, took.Round(time.Millisecond), stats, v)
			if got := v.Linearizable != porcupine.Ok; got != tc.wantOverlap {
				t.Errorf("porcupine: %s, want a violation: %v", result(v.Linearizable), tc.wantOverlap)
			}
			if got := v.Overlap != ""; got != tc.wantOverlap {
				t.Errorf("overlap witness %q, want one: %v", v.Overlap, tc.wantOverlap)
			}
			if got := v.TokenOrder != ""; tc.wantTokens >= 0 && got != (tc.wantTokens == 1) {
				t.Errorf("token order %q, want a violation: %v", v.TokenOrder, tc.wantTokens == 1)
			}
		})
	}
}
