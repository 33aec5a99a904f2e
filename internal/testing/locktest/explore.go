package locktest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/internal/testing/reorder"
)

// The explorer's flags: go test ./<package> -run '<suite>/Explore'
// -seed N replays one seed; -seeds sets how many it runs. (They follow
// the package: go test reads no package after a flag it does not know.)
var (
	seedFlag  = flag.Uint64("seed", 0, "the explorer's one seed to run (0: -seeds of them)")
	seedsFlag = flag.Int("seeds", 0, "how many seeds the explorer runs (0: 1000)")
)

// ExploreBound is how soon after every late command ran a fresh
// TryLock(0) must take a lock the explorer left: far below a lease,
// whatever the machine's load.
const ExploreBound = 500 * time.Millisecond

// explore runs the reordering explorer: for each seed, a holder holds
// the lock, a waiter whose connections go through a reordering proxy
// (reorder.Seeded: its script calls held past later ones, replies
// dropped after they ran) tries for it with a short wait, deadline or
// cancellation, the holder unlocks at a random moment, the server is
// paused now and then, and once every held command has run a fresh
// client must take the lock within ExploreBound, and nothing of the
// waiter may be left in Redis.
func explore(t *testing.T, e *env) {
	if e.srv == nil || e.srv.TLS() {
		t.Skip("the explorer's proxy reads plain RESP from one server")
	}
	e.srv.RequireReal(t)
	seeds := *seedsFlag
	if seeds <= 0 {
		redistest.SkipShort(t, "the explorer's 1000 seeds take seconds")
		seeds = 1000
	}
	first := uint64(1)
	if *seedFlag != 0 {
		first, seeds = *seedFlag, 1
	}
	const workers = 6
	var next atomic.Uint64
	next.Store(first)
	var (
		mu    sync.Mutex // guards waits
		waits []time.Duration
	)
	var wg sync.WaitGroup
	for range min(workers, seeds) {
		x := e.explorer(t)
		wg.Go(func() {
			for {
				seed := next.Add(1) - 1
				if seed >= first+uint64(seeds) || t.Failed() {
					return
				}
				took, err := x.run(t, seed)
				if err != nil {
					t.Errorf("seed %d: %v\nreplay: go test . -run '%s' -seed %d (in the package's folder)", seed, err, t.Name(), seed)
					continue
				}
				mu.Lock()
				waits = append(waits, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(waits) > 0 {
		slow := waits[0]
		for _, w := range waits {
			slow = max(slow, w)
		}
		t.Logf("%d seeds from %d: the lock was free %v at most after the late commands ran", len(waits), first, slow)
	}
}

// An explorer is one worker of explore: its proxy, the waiter's go-redis
// client through it, and the clients of the holder and of the fresh
// taker, which talk to the server directly.
type explorer struct {
	e      *env
	proxy  *reorder.Proxy
	rdb    redis.UniversalClient // the waiter's, through proxy
	raw    redis.UniversalClient
	holder *relock.Client
	fresh  *relock.Client
}

func (e *env) explorer(t *testing.T) *explorer {
	t.Helper()
	p, err := reorder.Start(e.srv.LockOptions().Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	o := e.srv.LockOptions()
	o.Addr = p.Addr()
	o.ContextTimeoutEnabled, o.MaxRetries = true, -1
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	return &explorer{e: e, proxy: p, rdb: rdb, raw: e.redis(t), holder: e.client(t, nil), fresh: e.client(t, nil)}
}

// scriptCalls matches the script calls the waiter's client sends.
func scriptCalls(c reorder.Cmd) bool {
	name := c.Name()
	return name == "evalsha" || name == "eval"
}

// run runs one seed, and returns how long after the late commands ran a
// fresh client took the lock.
func (x *explorer) run(t *testing.T, seed uint64) (time.Duration, error) {
	rng := rand.New(rand.NewPCG(seed, 0x6578706c6f7265))
	bg := context.Background()
	name := fmt.Sprintf("%s:%d", redistest.Key(t), seed)
	x.proxy.SetRule(reorder.Seeded(int64(seed), scriptCalls, 0.4, 0.2, 30*time.Millisecond))
	defer x.proxy.SetRule(nil)

	if x.e.k.Prepare != nil {
		if err := x.e.k.Prepare(bg, x.holder, name); err != nil {
			return 0, fmt.Errorf("prepare: %w", err)
		}
	}
	holder := x.e.k.New(x.holder, name, 0)
	hctx, err := holder.Lock(bg)
	if err != nil {
		return 0, fmt.Errorf("holder: %w", err)
	}
	released := make(chan error, 1)
	time.AfterFunc(time.Duration(rng.IntN(20000))*time.Microsecond, func() { released <- holder.Unlock(hctx) })
	if x.e.srv.Real() && rng.IntN(10) == 0 {
		pause := time.Duration(rng.IntN(10000)) * time.Microsecond
		time.AfterFunc(time.Duration(rng.IntN(10000))*time.Microsecond, func() {
			if x.e.srv.Pause() == nil {
				time.Sleep(pause)
				_ = x.e.srv.Resume()
			}
		})
	}

	rc, err := relock.New(x.rdb, &relock.Options{Linger: redistest.Linger})
	if err != nil {
		return 0, err
	}
	waiter := x.e.k.New(rc, name, 0)
	ctx, cancel := context.WithCancel(bg)
	lctx, err := giveUpAfter(ctx, cancel, waiter, rng, time.Duration(rng.IntN(20000))*time.Microsecond)
	cancel()
	// Any error will do: a single try whose reply was lost returns
	// Redis's, and what counts is what it leaves.
	if err == nil {
		uctx, ucancel := context.WithTimeout(lctx, time.Second)
		_ = waiter.Unlock(uctx)
		ucancel()
	}
	if err := <-released; err != nil && !errors.Is(err, relock.ErrNotHeld) {
		return 0, fmt.Errorf("holder's unlock: %w", err)
	}
	// The late commands run, and so do the waiter's clean-ups still
	// under way in the background (retried until Redis answers them,
	// through the proxy): relock noticed what the waiter left.
	x.proxy.Release()
	qctx, qcancel := context.WithTimeout(bg, 5*time.Second)
	err = x.proxy.Quiet(qctx)
	for err == nil && core.Of(rc).Running() > 0 && qctx.Err() == nil {
		time.Sleep(time.Millisecond)
		if core.Of(rc).Running() == 0 {
			err = x.proxy.Quiet(qctx)
		}
	}
	if err == nil {
		err = qctx.Err()
	}
	qcancel()
	if err != nil {
		return 0, fmt.Errorf("the late commands or the waiter's clean-ups did not all run: %w", err)
	}
	ran := time.Now()
	mu := x.e.k.New(x.fresh, name, 0)
	for {
		fctx, err := mu.TryLock(bg, 0)
		if err == nil {
			took := time.Since(ran)
			_ = mu.Unlock(fctx)
			rc.Close()
			if err := x.residue(name); err != nil {
				return 0, fmt.Errorf("%w (left: %s)", err, strings.Join((&Churn{Name: name, Raw: x.raw}).Leftovers(t), "; "))
			}
			return took, nil
		}
		if time.Since(ran) > ExploreBound {
			rc.Close()
			return 0, fmt.Errorf("a fresh TryLock(0) did not take the lock within %v of the late commands: %w (left: %s)",
				ExploreBound, err, strings.Join((&Churn{Name: name, Raw: x.raw}).Leftovers(t), "; "))
		}
		time.Sleep(time.Millisecond)
	}
}

// residue reports what the waiter left of name: a registry or queue
// entry.
func (x *explorer) residue(name string) error {
	keys := []string{"relock_lock_waiters:{" + name + "}"}
	if x.e.k.Residue != nil {
		keys = append(keys, x.e.k.Residue(name)...)
	}
	for _, key := range keys {
		if n, err := x.raw.Exists(context.Background(), key).Result(); err != nil || n != 0 {
			return fmt.Errorf("%s left behind (EXISTS %d, %v)", key, n, err)
		}
	}
	if x.e.k.Check != nil {
		return x.e.k.Check(context.Background(), x.raw, name)
	}
	return nil
}
