package locktest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A Churn is a load as a service under churn puts on one lock name:
// several clients, each as its own process, and several goroutines per
// client, mixing bounded waits, tiny deadlines, cancellations from
// another goroutine, short holds and unlocks, now and then a
// ForceUnlock from another client, and a client closed halfway. Run
// checks that no two owners hold the lock while the first one's context
// is alive (but across a ForceUnlock, whose notice reaches the holder
// late by design), then that once everything stopped nothing of the
// name is left in Redis within Settle (but what Left allows) and that a
// fresh client takes the lock at once.
type Churn struct {
	// Name is the lock's name: every key Run looks at contains it.
	Name string
	// Redis returns a go-redis client for one relock client, closed when
	// t ends; Raw is the suite's own client, for reading what is left.
	Redis func(t testing.TB) redis.UniversalClient
	Raw   redis.UniversalClient
	// New returns the lock on rc; Force, if set, force-unlocks it.
	New   func(rc *relock.Client) relock.Locker
	Force func(ctx context.Context, rc *relock.Client) error
	// Shared tells that several owners may hold the lock at once (a
	// read lock, a semaphore of several permits): Run checks no
	// exclusion.
	Shared bool
	// Left reports whether key may outlive the churn (relock's record of
	// given-up attempts, with a TTL, or a counter that is never
	// deleted); nil allows that record's keys only (relock_lock_gone and
	// relock_lock_gone_due).
	Left func(key string) bool
	// KeepClients leaves every client open until the end: for a
	// primitive whose holds a Close does not give back (a semaphore's
	// permits, which have no owner).
	KeepClients bool
	// Clients and Goroutines (per client) default to 4 and 2; For, how
	// long the churn runs, to 1 s; Settle, how soon after it nothing may
	// be left, to 2 s.
	Clients, Goroutines int
	For, Settle         time.Duration
	// Options are the relock clients' options: nil for a WatchdogTimeout
	// of 3 s, so that leases and records of given-up attempts are short,
	// yet a renewal is not lost to a goroutine the race detector and a
	// loaded machine delay for a few hundred milliseconds (a lease lost
	// that way ends the hold's context late, which the exclusion check
	// would report).
	Options *relock.Options
	// Seed drives each goroutine's choices.
	Seed uint64
}

// A holding is one hold the churn's goroutines took: its context, and
// churnState.forced as its Lock call began (a ForceUnlock that ran
// since, even before the call returned, may have ended it).
type holding struct {
	ctx    context.Context
	forced int64
}

// churnState is what the goroutines of one Run share.
type churnState struct {
	c *Churn
	// forced counts ForceUnlocks twice, as each starts and as it ends:
	// odd while one is under way.
	forced atomic.Int64

	mu      sync.Mutex          // guards holders and overlaps
	holders map[*holding]string // live holds, by the goroutine that took each
	// overlaps describes each time an owner took the lock while another
	// owner's hold, taken since the last ForceUnlock, had a live context.
	overlaps []string

	stats [4]atomic.Int64 // acquired, not acquired, other errors, unlocks
}

// Run runs the churn, fails t on anything it finds, and logs what the
// goroutines did.
func (c *Churn) Run(t *testing.T) {
	t.Helper()
	c.defaults()
	s := &churnState{c: c, holders: make(map[*holding]string)}
	opts := c.Options
	if opts == nil {
		opts = &relock.Options{WatchdogTimeout: 3 * time.Second}
	}
	clients := make([]*relock.Client, c.Clients)
	for i := range clients {
		rc, err := relock.New(c.Redis(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = rc
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, rc := range clients {
		mu := c.New(rc)
		for g := range c.Goroutines {
			rng := rand.New(rand.NewPCG(c.Seed, uint64(i*c.Goroutines+g)))
			who := fmt.Sprintf("client %d goroutine %d", i, g)
			wg.Go(func() { s.loop(mu, rng, who, stop) })
		}
	}
	if c.Force != nil {
		forcer, err := relock.New(c.Redis(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer forcer.Close()
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(c.Seed, 1<<32))
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Duration(50+rng.IntN(150)) * time.Millisecond):
				}
				s.forced.Add(1)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_ = c.Force(ctx, forcer)
				cancel()
				s.forced.Add(1)
			}
		})
	}
	// One client goes away halfway, its goroutines still at work.
	time.Sleep(c.For / 2)
	if !c.KeepClients {
		_ = clients[0].Close()
	}
	time.Sleep(c.For - c.For/2)
	close(stop)
	wg.Wait()
	for i, rc := range clients {
		if i == 0 && !c.KeepClients {
			continue
		}
		if err := rc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	t.Logf("%d acquired, %d not acquired, %d other errors, %d unlocks, %d force-unlocks",
		s.stats[0].Load(), s.stats[1].Load(), s.stats[2].Load(), s.stats[3].Load(), s.forced.Load()/2)
	if s.stats[0].Load() == 0 {
		t.Error("no acquire succeeded: the churn proved nothing")
	}
	for _, o := range s.overlaps {
		t.Error(o)
	}
	var left []string
	deadline := time.Now().Add(c.Settle)
	for {
		left = c.Leftovers(t)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("left in Redis %v after the churn: %s", c.Settle, strings.Join(left, "; "))
	}
	fresh, err := relock.New(c.Redis(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	mu := c.New(fresh)
	lctx, err := mu.TryLock(context.Background(), 0)
	if err != nil {
		t.Fatalf("a fresh TryLock(0) after the churn: %v", err)
	}
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}

func (c *Churn) defaults() {
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Goroutines == 0 {
		c.Goroutines = 2
	}
	if c.For == 0 {
		c.For = time.Second
	}
	if c.Settle == 0 {
		c.Settle = 2 * time.Second
	}
}

// Leftovers describes every key of the churn's name in Redis that Left
// does not allow, with what it holds.
func (c *Churn) Leftovers(t testing.TB) []string {
	t.Helper()
	bg := context.Background()
	var keys []string
	scan := func(ctx context.Context, node *redis.Client) error {
		iter := node.Scan(ctx, 0, "*"+c.Name+"*", 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return iter.Err()
	}
	var err error
	if cc, ok := c.Raw.(*redis.ClusterClient); ok {
		var mu sync.Mutex
		err = cc.ForEachMaster(bg, func(ctx context.Context, node *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			return scan(ctx, node)
		})
	} else {
		err = scan(bg, c.Raw.(*redis.Client))
	}
	if err != nil {
		t.Fatal(err)
	}
	left := c.Left
	if left == nil {
		left = func(key string) bool {
			return strings.HasPrefix(key, "relock_lock_gone:") || strings.HasPrefix(key, "relock_lock_gone_due:")
		}
	}
	var out []string
	for _, key := range keys {
		if left(key) {
			continue
		}
		typ := c.Raw.Type(bg, key).Val()
		var v any
		switch typ {
		case "hash":
			v = c.Raw.HGetAll(bg, key).Val()
		case "list":
			v = c.Raw.LRange(bg, key, 0, -1).Val()
		case "zset":
			v = c.Raw.ZRangeWithScores(bg, key, 0, -1).Val()
		case "string":
			v = c.Raw.Get(bg, key).Val()
		}
		out = append(out, fmt.Sprintf("%s (%s, PTTL %v): %v", key, typ, c.Raw.PTTL(bg, key).Val(), v))
	}
	return out
}

// loop is one goroutine's churn, until stop is closed or its client
// closes.
func (s *churnState) loop(mu relock.Locker, rng *rand.Rand, who string, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		ctx, cancel := context.WithCancel(context.Background())
		forced := s.forced.Load()
		lctx, err := giveUpAfter(ctx, cancel, mu, rng, time.Duration(rng.IntN(3000))*time.Microsecond)
		switch {
		case errors.Is(err, relock.ErrClosed):
			cancel()
			return
		case errors.Is(err, relock.ErrNotAcquired):
			s.stats[1].Add(1)
		case err != nil:
			s.stats[2].Add(1)
		default:
			s.stats[0].Add(1)
			h := s.took(lctx, who, forced)
			time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
			s.drop(h)
			if mu.Unlock(lctx) == nil {
				s.stats[3].Add(1)
			}
		}
		cancel()
	}
}

// giveUpAfter makes one acquire of mu on ctx that gives up after wait,
// in one of the three ways a caller gives up, which rng picks: TryLock's
// wait, a deadline, or ctx's cancel, called from another goroutine.
func giveUpAfter(ctx context.Context, cancel context.CancelFunc, mu relock.Locker, rng *rand.Rand, wait time.Duration) (context.Context, error) {
	switch rng.IntN(3) {
	case 0:
		return mu.TryLock(ctx, wait)
	case 1:
		dctx, dcancel := context.WithTimeout(ctx, wait)
		defer dcancel()
		return mu.Lock(dctx)
	}
	stop := time.AfterFunc(wait, cancel)
	defer stop.Stop()
	return mu.Lock(ctx)
}

// took records a hold whose Lock call began when s.forced was forced,
// and an overlap with any other live hold when no ForceUnlock may have
// ended either: none ran since either Lock call began. The new hold may
// have been taken in Redis well before this call (its goroutine
// delayed), then ended by a ForceUnlock that let the other in: its own
// context learns of that late, by design.
func (s *churnState) took(ctx context.Context, who string, forced int64) *holding {
	h := &holding{ctx: ctx, forced: forced}
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.forced.Load(); !s.c.Shared && forced == now {
		for o, owho := range s.holders {
			if o.ctx.Err() == nil && o.forced == now && now%2 == 0 {
				s.overlaps = append(s.overlaps, fmt.Sprintf("%s took the lock while %s held it", who, owho))
			}
		}
	}
	s.holders[h] = who
	return h
}

func (s *churnState) drop(h *holding) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.holders, h)
}

// churn is the suite's churn for its kind of lock: with ForceUnlock, on
// a real server (miniredis has no real time for leases to run out in).
func churn(t *testing.T, e *env) {
	redistest.SkipShort(t, "the churn runs for a second and more")
	if e.srv != nil {
		e.srv.RequireReal(t)
	}
	name := redistest.Key(t)
	c := &Churn{
		Name:   name,
		Redis:  e.lockRedis,
		Raw:    e.redis(t),
		New:    func(rc *relock.Client) relock.Locker { return e.k.New(rc, name, 0) },
		Left:   e.k.Left,
		Shared: e.k.Shared,
		Seed:   uint64(time.Now().UnixNano()),
	}
	if !e.k.NoForce {
		c.Force = func(ctx context.Context, rc *relock.Client) error {
			_, err := e.k.New(rc, name, 0).ForceUnlock(ctx)
			return err
		}
	}
	t.Logf("seed %d", c.Seed)
	c.Run(t)
}

// churnCatchesLeak: what the churn checks after its load finds a hold
// left behind by an owner that is gone, and a waiter's entry of relock's
// registry, while it lets relock's record of given-up attempts be.
func churnCatchesLeak(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	raw := e.redis(t)
	c := &Churn{Name: name, Raw: raw}
	gone := "00000000-0000-8000-8000-000000000000:1"
	registry := "relock_lock_waiters:{" + name + "}"
	if err := raw.HSet(bg, name, gone, 1).Err(); err != nil {
		t.Fatal(err)
	}
	raw.ZAdd(bg, registry, redis.Z{Score: 1, Member: gone})
	raw.HSet(bg, "relock_lock_gone:{"+name+"}", gone, 7)
	defer raw.Del(bg, name, registry, "relock_lock_gone:{"+name+"}")
	left := c.Leftovers(t)
	found := func(key string) bool {
		return slices.ContainsFunc(left, func(l string) bool { return strings.HasPrefix(l, key+" (") })
	}
	if len(left) != 2 || !found(name) || !found(registry) {
		t.Fatalf("Leftovers = %q, want the hold and the registry entry", left)
	}
}
