package latch_test

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
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/internal/testing/reorder"
	"github.com/relock-go/relock/latch"
)

// exploreWorkers is how many seeds TestExplore runs at once.
const exploreWorkers = 6

// counterStart is the count of each seed's counter latch: above the
// CountDowns a seed makes, so that it never opens.
const counterStart = 10

// sleeperBound is how soon after the late commands ran the Await
// without a deadline must return: locktest.ExploreBound, plus the second
// a waiter whose reads failed (replies the proxy dropped) may sleep
// before it reads again (internal/wait's backoff, 50 ms doubling to 1 s).
const sleeperBound = time.Second + locktest.ExploreBound

// TestExplore is the reordering explorer for the latch. For each seed, a
// client whose go-redis connections go through a reordering proxy
// (reorder.Seeded on the latch's script calls and its reads of the
// count, GET: four in ten held up to 30 ms past commands sent later on
// other connections, one in five with its reply dropped after it ran;
// the subscription passes untouched) waits on a latch of a small count:
// an Await with a deadline or a cancellation, or a TryAwait, all of
// 0-20 ms, and an Await without a deadline. Meanwhile a second client,
// talking to the server directly, opens the latch at a random moment in 0-20 ms, by counting it
// down to zero or by a Delete, and the proxied client counts another
// latch, the counter, down a few times with deadlines of 0-20 ms that cut
// some CountDowns off. The server is paused for up to 10 ms now and then.
// Once every command the proxy held has run, it proves:
//
//   - a wait that reported the latch open returned after the call that
//     opened it began: no read held past the opening, no lost reply,
//     made a waiter see an opening that had not happened;
//   - the Await without a deadline returns (nil) within sleeperBound:
//     no reordering leaves a waiter asleep on an open latch;
//   - an Await without a deadline begun on the proxied client after the
//     opening returns at once;
//   - the counter went down once for each CountDown that returned nil,
//     and at most once for each that returned an error (which may or
//     may not have counted, as documented): none counted twice;
//   - nothing is left in Redis but the counter: no count on the opened
//     latch, no key of relock's own, and no subscription of the latch's
//     channel once the proxied client closed.
//
// go test ./latch -run TestExplore -seed N replays seed N; -seeds sets
// how many seeds run (default 1000). The flags are locktest's, which
// registers them in every test binary importing it.
func TestExplore(t *testing.T) {
	srv.RequireReal(t) // the proxy reads plain RESP; SIGSTOP
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
		mu    sync.Mutex // guards slow, ran and tally
		slow  time.Duration
		ran   int
		tally exploreTally
		start = time.Now()
	)
	var wg sync.WaitGroup
	for range min(exploreWorkers, seeds) {
		x := newExplorer(t)
		wg.Go(func() {
			for {
				seed := next.Add(1) - 1
				if seed >= first+uint64(seeds) || t.Failed() {
					return
				}
				r, err := x.run(t, seed)
				if err != nil {
					t.Errorf("seed %d: %v\nreplay: go test ./latch -run TestExplore -seed %d", seed, err, seed)
					continue
				}
				mu.Lock()
				slow, ran = max(slow, r.woke), ran+1
				tally.add(r.tally)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d seeds from %d in %v; waits: %d open, %d not; counter: %d CountDowns nil, %d failed, %d of those counted; "+
		"the Await without a deadline returned %v at most after the late commands ran",
		ran, first, time.Since(start).Round(time.Millisecond), tally.open, tally.notOpen, tally.downOK, tally.downErr, tally.lateCounted, slow)
	if !t.Failed() && ran >= 100 && (tally.open == 0 || tally.notOpen == 0 || tally.downErr == 0 || tally.lateCounted == 0) {
		t.Error("the seeds never reached a case they are there for: the explorer proved nothing")
	}
}

// flagValue returns the value of the flag name, which locktest
// registers.
func flagValue[T any](t *testing.T, name string) T {
	t.Helper()
	f := flag.Lookup(name)
	if f == nil {
		t.Fatalf("no -%s flag: locktest no longer registers it", name)
	}
	v, ok := f.Value.(flag.Getter).Get().(T)
	if !ok {
		t.Fatalf("-%s is a %T", name, f.Value.(flag.Getter).Get())
	}
	return v
}

// An explorer is one worker of TestExplore: its proxy, the go-redis
// client through it, and the clients that talk to the server directly:
// the opener's relock client and the test's own.
type explorer struct {
	proxy  *reorder.Proxy
	rdb    *redis.Client // through proxy
	raw    *redis.Client
	opener *relock.Client
}

func newExplorer(t *testing.T) *explorer {
	t.Helper()
	p, err := reorder.Start(srv.LockOptions().Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	o := srv.LockOptions()
	o.Addr = p.Addr()
	// relock uses a client that honours deadlines and never resends as
	// it is: the proxied client's calls go through this very client.
	o.ContextTimeoutEnabled, o.MaxRetries = true, -1
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	return &explorer{proxy: p, rdb: rdb, raw: srv.Client(t), opener: newClient(t)}
}

// latchCalls matches what a latch's client sends but for its
// subscription: the scripts (TrySetCount, CountDown, Delete) and the
// reads of the count.
func latchCalls(c reorder.Cmd) bool {
	switch c.Name() {
	case "evalsha", "eval", "get":
		return true
	}
	return false
}

// exploreTally counts what the seeds did, to tell that they reached the
// cases they are there for.
type exploreTally struct {
	open, notOpen   int // the bounded wait's outcome
	downOK, downErr int // the counter's CountDowns
	lateCounted     int // failed CountDowns that counted
}

func (a *exploreTally) add(b exploreTally) {
	a.open += b.open
	a.notOpen += b.notOpen
	a.downOK += b.downOK
	a.downErr += b.downErr
	a.lateCounted += b.lateCounted
}

// A seedResult is what one seed found.
type seedResult struct {
	tally exploreTally
	// woke is how long after the late commands ran the Await without a
	// deadline returned (0 if it had returned before).
	woke time.Duration
}

// An awaited is a wait's outcome and when it returned.
type awaited struct {
	open bool
	err  error
	at   time.Time
}

// run runs one seed.
func (x *explorer) run(t *testing.T, seed uint64) (seedResult, error) {
	var res seedResult
	rng := rand.New(rand.NewPCG(seed, 0x6c61746368))
	bg := context.Background()
	name := fmt.Sprintf("%s:%d", redistest.Key(t), seed)
	counter := name + ":counter"
	x.proxy.SetRule(reorder.Seeded(int64(seed), latchCalls, 0.4, 0.2, 30*time.Millisecond))
	defer x.proxy.SetRule(nil)

	n := 1 + rng.IntN(3)
	direct := latch.New(x.opener, name, nil)
	if ok, err := direct.TrySetCount(bg, int64(n)); !ok || err != nil {
		return res, fmt.Errorf("TrySetCount(%d) = %v, %v", n, ok, err)
	}
	if ok, err := latch.New(x.opener, counter, nil).TrySetCount(bg, counterStart); !ok || err != nil {
		return res, fmt.Errorf("the counter's TrySetCount = %v, %v", ok, err)
	}
	defer x.raw.Del(bg, counter)

	// The opener: n CountDowns, or a Delete, at a random moment.
	byDelete := rng.IntN(3) == 0
	var openStart time.Time // when the call that opened the latch began
	opened := make(chan error, 1)
	time.AfterFunc(time.Duration(rng.IntN(20000))*time.Microsecond, func() {
		if byDelete {
			openStart = time.Now()
			ok, err := direct.Delete(bg)
			if err == nil && !ok {
				err = errors.New("Delete found no count")
			}
			opened <- err
			return
		}
		for i := range n {
			if i == n-1 {
				openStart = time.Now()
			}
			if err := direct.CountDown(bg); err != nil {
				opened <- err
				return
			}
		}
		opened <- nil
	})
	if rng.IntN(10) == 0 {
		// The server paused for up to 10 ms, resumed before the seed
		// returns.
		pause := time.Duration(rng.IntN(10000)) * time.Microsecond
		resumed := make(chan struct{})
		defer func() { <-resumed }()
		time.AfterFunc(time.Duration(rng.IntN(10000))*time.Microsecond, func() {
			defer close(resumed)
			if srv.Pause() == nil {
				time.Sleep(pause)
				_ = srv.Resume()
			}
		})
	}

	rc, err := relock.New(x.rdb, &relock.Options{Linger: redistest.Linger})
	if err != nil {
		return res, err
	}
	defer rc.Close()
	waiter := latch.New(rc, name, nil)

	// The Await without a deadline, bounded by limit only so that a bug
	// cannot hang the test.
	sleeperCtx, stopSleeper := context.WithTimeout(bg, limit)
	defer stopSleeper()
	sleeper := make(chan awaited, 1)
	go func() {
		err := waiter.Await(sleeperCtx)
		sleeper <- awaited{open: err == nil, err: err, at: time.Now()}
	}()

	// The counter's CountDowns, with deadlines that may cut them off.
	downs := 2 + rng.IntN(4)
	deadlines := make([]time.Duration, downs)
	for i := range deadlines {
		deadlines[i] = time.Duration(rng.IntN(20000)) * time.Microsecond
	}
	var downOK, downErr int
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		c := latch.New(rc, counter, nil)
		for _, d := range deadlines {
			ctx, cancel := context.WithTimeout(bg, d)
			if c.CountDown(ctx) == nil {
				downOK++
			} else {
				downErr++
			}
			cancel()
		}
	}()

	// The bounded wait.
	wait := time.Duration(rng.IntN(20000)) * time.Microsecond
	how, w := boundedWait(waiter, rng, wait)

	<-counted
	if err := <-opened; err != nil {
		return res, fmt.Errorf("the opener: %w", err)
	}
	x.proxy.SetRule(nil)
	x.proxy.Release()
	qctx, qcancel := context.WithTimeout(bg, 5*time.Second)
	err = x.proxy.Quiet(qctx)
	qcancel()
	if err != nil {
		return res, fmt.Errorf("the late commands did not all run: %w", err)
	}
	ran := time.Now()

	did := fmt.Sprintf("the latch of %d opened by %s (begun %v before the late commands ran); the waiter's %s(%v): open %v, %v",
		n, map[bool]string{true: "a Delete", false: "CountDowns"}[byDelete], ran.Sub(openStart), how, wait, w.open, w.err)
	if w.open {
		res.tally.open++
		if w.at.Before(openStart) {
			return res, fmt.Errorf("%s: it returned %v before the call that opened the latch began", did, openStart.Sub(w.at))
		}
	} else {
		res.tally.notOpen++
	}
	select {
	case s := <-sleeper:
		if !s.open {
			return res, fmt.Errorf("%s; the Await without a deadline: %v", did, s.err)
		}
		if s.at.Before(openStart) {
			return res, fmt.Errorf("%s; the Await without a deadline returned %v before the call that opened the latch began", did, openStart.Sub(s.at))
		}
		res.woke = max(s.at.Sub(ran), 0)
	case <-time.After(time.Until(ran.Add(sleeperBound))):
		return res, fmt.Errorf("%s; the Await without a deadline still waits %v after the late commands ran", did, sleeperBound)
	}

	// An Await begun after the opening returns at once.
	actx, acancel := context.WithTimeout(bg, locktest.ExploreBound)
	err = waiter.Await(actx)
	acancel()
	if err != nil {
		return res, fmt.Errorf("%s; an Await begun after the opening: %w", did, err)
	}

	// The counter: each nil CountDown once, each failed one at most once.
	left, err := x.raw.Get(bg, counter).Int()
	if err != nil {
		return res, fmt.Errorf("the counter: %w", err)
	}
	res.tally.downOK, res.tally.downErr = downOK, downErr
	d := counterStart - left
	if d < downOK || d > downOK+downErr {
		return res, fmt.Errorf("%s; the counter went down %d times for %d CountDowns that returned nil and %d that failed", did, d, downOK, downErr)
	}
	res.tally.lateCounted = d - downOK

	// Nothing left but the counter, and no subscription once the
	// proxied client closed.
	if err := rc.Close(); err != nil {
		return res, fmt.Errorf("Close: %w", err)
	}
	if left := settle(t, x.raw, name, channelOf(name), func(key string) bool { return key == counter }, locktest.ExploreBound); len(left) > 0 {
		return res, fmt.Errorf("%s; left %v after the late commands ran: %s", did, locktest.ExploreBound, strings.Join(left, "; "))
	}
	return res, nil
}

// boundedWait makes one wait on l that gives up after wait, in one of
// the ways a caller gives up, which rng picks: TryAwait's wait, a
// deadline, or a cancellation from another goroutine. It names the way.
func boundedWait(l *latch.Latch, rng *rand.Rand, wait time.Duration) (string, awaited) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var open bool
	var err error
	var how string
	switch rng.IntN(3) {
	case 0:
		how = "TryAwait"
		open, err = l.TryAwait(ctx, wait)
	case 1:
		how = "Await with a deadline"
		dctx, dcancel := context.WithTimeout(ctx, wait)
		err = l.Await(dctx)
		dcancel()
		open = err == nil
	default:
		how = "Await cancelled after"
		stop := time.AfterFunc(wait, cancel)
		err = l.Await(ctx)
		stop.Stop()
		open = err == nil
	}
	return how, awaited{open: open, err: err, at: time.Now()}
}
