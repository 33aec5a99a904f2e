package faulttest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// lockUnderTest is what the history run drives: *reentrant.Mutex, or a
// deliberately broken stand-in.
type lockUnderTest interface {
	Lock(ctx context.Context) (context.Context, error)
	Unlock(ctx context.Context) error
	Token(ctx context.Context) (int64, error)
}

// A run is one history run's configuration.
type run struct {
	Clients, PerClient, Locks int
	Watchdog                  time.Duration // every client's WatchdogTimeout
	// The last FixedClients clients lock with a fixed lease of
	// FixedLease instead of the watchdog.
	FixedClients int
	FixedLease   time.Duration
	Chaos        bool  // faults through a proxy per client
	Seed         int64 // seeds the workers and the chaos
	// LongProb is the chance that a watchdog client's hold works for
	// 1.5 leases (minding its context): a holder the chaos may pause.
	LongProb float64
	// PauseProb is the chance that a fixed-lease client's hold sleeps
	// for 1.5 leases without looking at its context: a paused process.
	PauseProb float64
	// IgnoreLoss makes holders believe they hold until they call
	// Unlock, whatever their context says, and hold for Hold each time:
	// a broken use that the checker must catch.
	IgnoreLoss bool
	Hold       time.Duration
	// NewLock overrides the lock (broken stand-ins); nil: a fenced
	// reentrant.Mutex.
	NewLock func(rc *relock.Client, name string, lease time.Duration) lockUnderTest
}

// runStats counts what happened in a run.
type runStats struct {
	Acquisitions, LockErrors, LockTimeouts atomic.Int64
	LostHolds, DeadlineEnds, OtherEnds     atomic.Int64 // holds whose context ended before Unlock, by cause
	UnlockNotHeld, UnlockRetries           atomic.Int64
	LeakedHolds                            atomic.Int64 // Unlock left the hold in place (see bugs_test.go)
	NoToken, LongHolds, Pauses             atomic.Int64
	// Chaos.
	LatencyChanges, Partitions, LongPartitions, HolderPauses atomic.Int64
	PartitionTime                                            atomic.Int64 // ns
}

func (s *runStats) String() string {
	return fmt.Sprintf("acquisitions %d, Lock errors %d (timeouts %d); holds ended before Unlock: %d lease lost, %d fixed-lease deadline, %d other; "+
		"Unlock answered not-held %d, Unlock retries %d, leaked holds %d; no token %d; long holds %d, paused holders (sleep past lease) %d; "+
		"chaos: %d latency changes, %d partitions (%d of them longer than 0.9 lease, %v in all), %d holder pauses",
		s.Acquisitions.Load(), s.LockErrors.Load(), s.LockTimeouts.Load(), s.LostHolds.Load(), s.DeadlineEnds.Load(), s.OtherEnds.Load(),
		s.UnlockNotHeld.Load(), s.UnlockRetries.Load(), s.LeakedHolds.Load(), s.NoToken.Load(), s.LongHolds.Load(), s.Pauses.Load(),
		s.LatencyChanges.Load(), s.Partitions.Load(), s.LongPartitions.Load(), time.Duration(s.PartitionTime.Load()).Round(time.Millisecond), s.HolderPauses.Load())
}

// quiet is the clients' logger: failed renewals and reconnects are the
// point of these runs, not news.
var quiet = slog.New(slog.DiscardHandler)

// lockWait bounds each Lock of a run: a wait that long is a liveness
// failure (every hold is short or ends with a lease).
const lockWait = 30 * time.Second

// history drives cfg and returns every acquisition, with the run's
// statistics and wall time.
func (cfg run) history(t *testing.T) ([]acquisition, *runStats, time.Duration) {
	t.Helper()
	names := make([]string, cfg.Locks)
	for i := range names {
		names[i] = redistest.Key(t)
	}
	proxies := make([]*proxy, cfg.Clients)
	locks := make([][]lockUnderTest, cfg.Clients)
	for i := range cfg.Clients {
		addr := srv.Addr
		if cfg.Chaos {
			proxies[i] = newProxy(t)
			addr = proxies[i].Addr
		}
		rc := newClient(t, addr, &relock.Options{WatchdogTimeout: cfg.Watchdog, Logger: quiet})
		var lease time.Duration
		if i >= cfg.Clients-cfg.FixedClients {
			lease = cfg.FixedLease
		}
		for _, name := range names {
			var l lockUnderTest
			if cfg.NewLock != nil {
				l = cfg.NewLock(rc, name, lease)
			} else {
				l = reentrant.New(rc, name, &reentrant.Options{Lease: lease, Fencing: true})
			}
			locks[i] = append(locks[i], l)
		}
	}

	stats := &runStats{}
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	holding := make([]atomic.Bool, cfg.Clients) // in a long hold, pausable
	results := make([][]acquisition, cfg.Clients)
	var wg sync.WaitGroup
	for i := range cfg.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := worker{cfg: cfg, i: i, r: rand.New(rand.NewSource(cfg.Seed + int64(i))), locks: locks[i],
				fixed: i >= cfg.Clients-cfg.FixedClients, stats: stats, start: start, long: &holding[i]}
			results[i] = w.run(t)
		}()
	}
	done := make(chan struct{})
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		if cfg.Chaos {
			chaos(t, cfg, proxies, holding, stats, done)
		}
	}()
	wg.Wait()
	close(done)
	<-chaosDone
	end := now()
	took := time.Since(start)
	for _, x := range proxies {
		if x != nil {
			if err := errors.Join(x.Heal(), x.SetLatency(0, 0)); err != nil {
				t.Error(err)
			}
		}
	}
	var h []acquisition
	for _, r := range results {
		for _, a := range r {
			if a.Settled < 0 {
				a.Settled = end
			}
			h = append(h, a)
		}
	}
	return h, stats, took
}

// A worker is one client's loop of acquisitions.
type worker struct {
	cfg   run
	i     int
	r     *rand.Rand
	locks []lockUnderTest
	fixed bool
	stats *runStats
	start time.Time // the run's, for timestamps
	long  *atomic.Bool
}

func (w *worker) now() int64 { return int64(time.Since(w.start)) }

func (w *worker) run(t *testing.T) []acquisition {
	var out []acquisition
	for range w.cfg.PerClient {
		if a, ok := w.acquire(t); ok {
			out = append(out, a)
		}
	}
	return out
}

// acquire takes a random lock once, holds it, and releases it, and
// records what the client saw.
func (w *worker) acquire(t *testing.T) (acquisition, bool) {
	li := w.r.Intn(len(w.locks))
	mu := w.locks[li]
	a := acquisition{Client: w.i, Lock: li, Settled: -1}
	// A context with no owner: every acquisition is a fresh owner.
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	defer cancel()
	a.Call = w.now()
	lctx, err := mu.Lock(ctx)
	a.Return = w.now()
	if err != nil {
		// A failed Lock may still have taken the lock on the server
		// (its reply lost); nobody uses such a hold, so it is not part
		// of the history, and it ends with its lease.
		w.stats.LockErrors.Add(1)
		if errors.Is(err, context.DeadlineExceeded) {
			w.stats.LockTimeouts.Add(1)
			t.Errorf("client %d: Lock waited %v: %v", w.i, lockWait, err)
		}
		return a, false
	}
	w.stats.Acquisitions.Add(1)
	var endedAt atomic.Int64
	ended := make(chan struct{})
	stop := context.AfterFunc(lctx, func() { endedAt.Store(w.now()); close(ended) })
	defer stop()
	if a.Token, err = mu.Token(lctx); err != nil {
		w.stats.NoToken.Add(1)
	}

	w.hold(lctx)

	unlockCall := w.now()
	endedFirst := lctx.Err() != nil
	a.End = unlockCall
	if !w.cfg.IgnoreLoss {
		if d, ok := lctx.Deadline(); ok {
			// A fixed lease's end, exactly: the context's timer may fire
			// a little late.
			a.End = min(a.End, int64(d.Sub(w.start)))
		}
		if endedFirst {
			select {
			case <-ended:
				a.End = min(a.End, endedAt.Load())
			case <-time.After(5 * time.Second):
				t.Errorf("client %d: lock context done but AfterFunc did not run", w.i)
			}
			switch cause := context.Cause(lctx); {
			case errors.Is(cause, relock.ErrLockLost) && w.fixed:
				w.stats.DeadlineEnds.Add(1)
			case errors.Is(cause, relock.ErrLockLost):
				w.stats.LostHolds.Add(1)
			default:
				w.stats.OtherEnds.Add(1)
				t.Errorf("client %d: lock context ended with cause %v, want relock.ErrLockLost", w.i, cause)
			}
		}
	}
	a.Settled = w.unlock(t, mu, lctx)
	return a, true
}

// hold is the critical section.
func (w *worker) hold(lctx context.Context) {
	var d time.Duration
	switch {
	case w.cfg.IgnoreLoss:
		time.Sleep(w.cfg.Hold)
		return
	case w.fixed && w.r.Float64() < w.cfg.PauseProb:
		// Paused: no look at the context until the sleep is over.
		w.stats.Pauses.Add(1)
		time.Sleep(w.cfg.FixedLease * 3 / 2)
		return
	case !w.fixed && w.r.Float64() < w.cfg.LongProb:
		w.stats.LongHolds.Add(1)
		w.long.Store(true)
		defer w.long.Store(false)
		d = w.cfg.Watchdog * 3 / 2
	default:
		d = time.Duration(w.r.Int63n(int64(time.Millisecond)))
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-lctx.Done():
	}
}

// unlock releases the hold, retrying until Redis answers (released, or
// not held), and returns when it did; -1 if it never did.
func (w *worker) unlock(t *testing.T, mu lockUnderTest, lctx context.Context) int64 {
	for try := 0; try < 100; try++ {
		err := mu.Unlock(lctx)
		switch {
		case errors.Is(err, relock.ErrNotHeld):
			w.stats.UnlockNotHeld.Add(1)
			return w.now()
		case err == nil && lctx.Err() == nil && !w.cfg.IgnoreLoss && w.cfg.NewLock == nil:
			// Unlock found more holds than this owner took: a retried
			// acquire counted twice (bugs_test.go). Release the extra
			// one so the run goes on; the hold counts as ended at the
			// first Unlock call, and as settled when the lock is gone.
			w.stats.LeakedHolds.Add(1)
			continue
		case err == nil:
			return w.now()
		}
		w.stats.UnlockRetries.Add(1)
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("client %d: Unlock never got an answer", w.i)
	return -1
}
