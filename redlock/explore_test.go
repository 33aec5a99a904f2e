package redlock_test

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
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/internal/testing/reorder"
	"github.com/relock-go/relock/redlock"
)

// exploreWorkers is how many seeds TestExplore runs at once.
const exploreWorkers = 6

// TestExplore is the reordering explorer for RedLock. For each seed a
// holder holds the lock on 3 masters, and a waiter whose connection to
// each master goes through a reordering proxy of its own (reorder.Seeded
// with a seed per master: script calls held up to 30 ms past later ones
// on other connections, replies dropped after the command ran) tries for
// it with a wait, a deadline or a cancellation of 0-20 ms and a
// NodeTimeout of 20-60 ms, which the holds may outlast; the holder
// unlocks at a random moment in 0-20 ms. Then the network heals: every
// held command runs, and the waiter's releases that got no answer, sent
// again in the background, are done. A fresh RedLock must then take the
// lock within locktest.ExploreBound, and no master may keep anything of
// the waiter: no record in the lock's hash, no entry in relock's waiter
// registry. It proves that an acquire whose reply a master lost, and
// that runs there after the undo or the Unlock sent since on another
// connection, leaves nothing: relock's record of given-up attempts
// refuses it, and a release whose own reply was lost is sent again.
//
// go test ./redlock -run TestExplore -seed N replays seed N (the timing
// differs from run to run); -seeds sets how many seeds run (default
// 1000). The flags are locktest's, which registers them in every test
// binary that imports it.
func TestExplore(t *testing.T) {
	servers := shared[:3]
	for _, s := range servers {
		s.RequireReal(t)
	}
	first, seeds := uint64(1), flagValue[int](t, "seeds")
	if seeds <= 0 {
		redistest.SkipShort(t, "the explorer's 1000 seeds take seconds")
		seeds = 1000
	}
	if seed := flagValue[uint64](t, "seed"); seed != 0 {
		first, seeds = seed, 1
	}
	var next atomic.Uint64
	next.Store(first)
	var (
		mu         sync.Mutex // guards ran, slowest and background
		ran        int
		slowest    time.Duration // a fresh TryLock's, after the late commands
		background time.Duration // the waiter's releases sent again
	)
	start := time.Now()
	var wg sync.WaitGroup
	for range min(exploreWorkers, seeds) {
		x := newExplorer(t, servers)
		wg.Go(func() {
			for {
				seed := next.Add(1) - 1
				if seed >= first+uint64(seeds) || t.Failed() {
					return
				}
				r, err := x.run(t, seed)
				if err != nil {
					t.Errorf("seed %d: %v\nreplay: go test ./redlock -run TestExplore -seed %d", seed, err, seed)
					continue
				}
				mu.Lock()
				ran++
				slowest, background = max(slowest, r.fresh), max(background, r.background)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d seeds from %d in %v: the waiter's releases sent again took %v at most, a fresh TryLock %v at most",
		ran, first, time.Since(start).Round(time.Millisecond), background, slowest)
}

// flagValue returns the value of the flag name, which locktest
// registers.
func flagValue[T any](t *testing.T, name string) T {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no -%s flag: locktest no longer registers it", name)
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		t.Fatalf("-%s has no value to read", name)
	}
	v, ok := g.Get().(T)
	if !ok {
		t.Fatalf("-%s is a %T", name, g.Get())
	}
	return v
}

// An explorer is one worker of TestExplore: a proxy per master, the
// waiter's relock client through each, and the relock clients of the
// holder and of the fresh taker and a client of the test's own per
// master, which talk to the masters directly.
type explorer struct {
	proxies []*reorder.Proxy
	waiter  []*relock.Client // through proxies
	raws    []*redis.Client
	holder  []*relock.Client
	fresh   []*relock.Client
}

func newExplorer(t *testing.T, servers []*redistest.Server) *explorer {
	t.Helper()
	x := &explorer{holder: clientsOn(t, servers, nil), fresh: clientsOn(t, servers, nil)}
	for _, s := range servers {
		p, err := reorder.Start(s.LockOptions().Addr, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		o := s.LockOptions()
		o.Addr = p.Addr()
		// relock sends its scripts through this client as it is.
		o.ContextTimeoutEnabled, o.MaxRetries = true, -1
		rdb := redis.NewClient(o)
		t.Cleanup(func() { rdb.Close() })
		x.proxies = append(x.proxies, p)
		x.waiter = append(x.waiter, redistest.Relock(t, rdb, nil))
		x.raws = append(x.raws, s.Client(t))
	}
	return x
}

// sure are the options of the holder's and the fresh taker's RedLocks,
// whose masters answer at once but for the machine's load: a NodeTimeout
// far above that load's delays.
var sure = &redlock.Options{NodeTimeout: time.Second}

// scriptCalls matches the script calls of the waiter's clients: its
// acquires, its records of given-up attempts and its unlocks.
func scriptCalls(c reorder.Cmd) bool {
	name := c.Name()
	return name == "evalsha" || name == "eval"
}

// A result is how long one seed's waiter took to finish its releases in
// the background once the network healed, and how long after that a
// fresh RedLock took to take the lock.
type result struct {
	background, fresh time.Duration
}

// run runs one seed.
func (x *explorer) run(t *testing.T, seed uint64) (result, error) {
	rng := rand.New(rand.NewPCG(seed, 0x7265646c6f636b))
	bg := context.Background()
	name := fmt.Sprintf("%s:%d", redistest.Key(t), seed)
	for _, p := range x.proxies {
		p.SetRule(reorder.Seeded(rng.Int64(), scriptCalls, 0.4, 0.2, 30*time.Millisecond))
	}
	defer func() {
		for _, p := range x.proxies {
			p.SetRule(nil)
		}
	}()

	holder := redlock.New(x.holder, name, sure)
	hctx, err := holder.Lock(bg)
	if err != nil {
		return result{}, fmt.Errorf("holder: %w", err)
	}
	released := make(chan error, 1)
	time.AfterFunc(time.Duration(rng.IntN(20000))*time.Microsecond, func() { released <- holder.Unlock(hctx) })

	nodeTimeout := time.Duration(20+rng.IntN(41)) * time.Millisecond
	waiter := redlock.New(x.waiter, name, &redlock.Options{NodeTimeout: nodeTimeout})
	wait := time.Duration(rng.IntN(20000)) * time.Microsecond
	octx := relock.WithNewOwner(bg)
	lctx, how, err := giveUpAfter(octx, waiter, rng, wait)
	// Any error will do: what counts is what the waiter leaves.
	did := fmt.Sprintf("the waiter's %s %v with NodeTimeout %v: %v", how, wait, nodeTimeout, err)
	if err == nil {
		did += fmt.Sprintf("; its Unlock: %v", waiter.Unlock(lctx))
	}
	if err := <-released; err != nil && !errors.Is(err, relock.ErrNotHeld) {
		return result{}, fmt.Errorf("%s; the holder's Unlock: %w", did, err)
	}

	// The network heals: the held commands run, then the releases sent
	// again in the background get through.
	if err := x.quiet(); err != nil {
		return result{}, fmt.Errorf("%s; %w", did, err)
	}
	healed := time.Now()
	if err := x.awaitReleases(octx, name); err != nil {
		return result{}, fmt.Errorf("%s; %w", did, err)
	}
	if err := x.quiet(); err != nil {
		return result{}, fmt.Errorf("%s; %w", did, err)
	}
	ran := time.Now()
	r := result{background: ran.Sub(healed)}
	fresh := redlock.New(x.fresh, name, sure)
	for {
		fctx, err := fresh.TryLock(bg, 0)
		if err == nil {
			r.fresh = time.Since(ran)
			if err := fresh.Unlock(fctx); err != nil {
				return result{}, fmt.Errorf("the fresh RedLock's Unlock: %w", err)
			}
			break
		}
		if time.Since(ran) > locktest.ExploreBound {
			return result{}, fmt.Errorf("%s; a fresh TryLock(0) did not take the lock within %v of the late commands: %w (left: %s)",
				did, locktest.ExploreBound, err, x.leftovers(name))
		}
		time.Sleep(time.Millisecond)
	}
	for i, raw := range x.raws {
		for _, key := range []string{name, "relock_lock_waiters:{" + name + "}"} {
			if n, err := raw.Exists(bg, key).Result(); err != nil || n != 0 {
				return result{}, fmt.Errorf("%s; master %d: %s left (EXISTS %d, %v; left: %s)", did, i, key, n, err, x.leftovers(name))
			}
		}
	}
	return r, nil
}

// giveUpAfter makes one acquire of rl on ctx that gives up after wait in
// one of the three ways a caller gives up, which rng picks: TryLock's
// wait, a deadline, or a cancellation from another goroutine. It returns
// the lock context, which way it gave up, and the error.
func giveUpAfter(ctx context.Context, rl *redlock.RedLock, rng *rand.Rand, wait time.Duration) (context.Context, string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	switch rng.IntN(3) {
	case 0:
		lctx, err := rl.TryLock(ctx, wait)
		return lctx, "TryLock", err
	case 1:
		dctx, dcancel := context.WithTimeout(ctx, wait)
		defer dcancel()
		lctx, err := rl.Lock(dctx)
		return lctx, "Lock with a deadline of", err
	}
	stop := time.AfterFunc(wait, cancel)
	defer stop.Stop()
	lctx, err := rl.Lock(ctx)
	return lctx, "Lock cancelled after", err
}

// quiet heals the network: the proxies hold and drop nothing more, and
// quiet waits until every command they held has run and been answered.
func (x *explorer) quiet() error {
	for _, p := range x.proxies {
		p.SetRule(nil)
		p.Release()
	}
	for i, p := range x.proxies {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := p.Quiet(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("master %d: the late commands did not all run: %w", i, err)
		}
	}
	return nil
}

// awaitReleases waits until the releases of lock name that the waiter's
// clients send again in the background for the owner octx carries are
// done: they give up after relock.OpTimeout.
func (x *explorer) awaitReleases(octx context.Context, name string) error {
	owner, _ := core.OwnerFrom(octx)
	ctx, cancel := context.WithTimeout(context.Background(), relock.OpTimeout+time.Second)
	defer cancel()
	for i, rc := range x.waiter {
		c := core.Of(rc)
		if err := c.AwaitPending(ctx, core.HoldKey{Name: name, Field: c.Field(owner)}); err != nil {
			return fmt.Errorf("master %d: the releases sent again are not done: %w", i, err)
		}
	}
	return nil
}

// leftovers describes what each master has of name: the lock's hash
// and relock's waiter registry, by their fields.
func (x *explorer) leftovers(name string) string {
	var out []string
	bg := context.Background()
	for i, raw := range x.raws {
		if h := raw.HGetAll(bg, name).Val(); len(h) > 0 {
			out = append(out, fmt.Sprintf("master %d: %s %v (PTTL %v)", i, name, h, raw.PTTL(bg, name).Val()))
		}
		registry := "relock_lock_waiters:{" + name + "}"
		if z := raw.ZRange(bg, registry, 0, -1).Val(); len(z) > 0 {
			out = append(out, fmt.Sprintf("master %d: %s %v", i, registry, z))
		}
	}
	return strings.Join(out, "; ")
}
