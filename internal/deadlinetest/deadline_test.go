package deadlinetest_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
	"github.com/relock-go/relock/spinlock"
)

const (
	// deadline is each timed call's context deadline.
	deadline = 500 * time.Millisecond
	// margin is how far past the deadline a call may return before the
	// test fails: far above the slack relock aims for (core.Grace,
	// 25 ms; the bench reports the measured overshoot), so that a
	// loaded CI machine does not fail it.
	margin = 500 * time.Millisecond
	// lease is the clients' watchdog timeout: what a call left behind
	// must be gone within it once the server answers again.
	lease = 2 * time.Second
)

// A call is one blocking call to time.
type call struct {
	name string
	// acquire: an acquire path, whose error matches
	// relock.ErrNotAcquired when the deadline ended it.
	acquire bool
	// waits: a call that waits for its resource, which keeps trying
	// while Redis refuses connections, until the deadline.
	waits bool
	// held, for a call made with a lock's context (an unlock), is that
	// context: a lease lost meanwhile (renewals get no answer either)
	// cancels the call before its deadline can.
	held context.Context
	run  func(ctx context.Context) error
}

// A primitive sets up, on clients whose Redis still answers, the calls
// to time once the outage begins.
type primitive struct {
	name  string
	nodes int // independent servers (RedLock's masters); 1 when 0
	setup func(t *testing.T, ctx context.Context, rcs []*relock.Client, rdbs []redis.UniversalClient) []call
}

// An outage cuts a primitive's servers off from its clients.
type outage struct {
	name string
	// refused: connections are refused, so calls that do not wait fail
	// at once instead of running into the deadline.
	refused bool
	cut     func(t *testing.T, s *redistest.Server, p *proxy)
}

var outages = []outage{
	{name: "Refused", refused: true, cut: func(t *testing.T, _ *redistest.Server, p *proxy) { p.Refuse() }},
	{name: "Blackhole", cut: func(t *testing.T, _ *redistest.Server, p *proxy) { p.Blackhole() }},
	{name: "Stopped", cut: func(t *testing.T, s *redistest.Server, _ *proxy) {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Resume() })
	}},
}

// TestDeadlines times every blocking call of every primitive, with a
// context deadline, in each outage, and checks its error: the deadline's
// (with the acquire sentinel for acquires) where the deadline ended it.
// Then the servers answer again, directly, and every key the primitive's
// locks wrote must be gone within the lease.
//
// The scenarios spend their time waiting, so all of them run at once
// (t.Run from one goroutine each, which t.Parallel's limit of GOMAXPROCS
// would serialize). Under -short the black-hole scenarios, whose every
// call runs into its deadline (about 11s), are skipped.
func TestDeadlines(t *testing.T) {
	var wg sync.WaitGroup
	for _, o := range outages {
		for _, p := range primitives {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(o.name+"/"+p.name, func(t *testing.T) {
					if o.name == "Blackhole" {
						redistest.SkipShort(t, "every call of a black-hole scenario waits out its deadline")
					}
					runOutage(t, o, p)
				})
			}()
		}
	}
	wg.Wait()
}

func runOutage(t *testing.T, o outage, p primitive) {
	nodes := max(p.nodes, 1)
	var (
		servers []*redistest.Server
		proxies []*proxy
		rcs     []*relock.Client
		rdbs    []redis.UniversalClient
		direct  []*redis.Client
	)
	for range nodes {
		s := redistest.Start(t)
		s.RequireReal(t)
		px := newProxy(t, s.Addr)
		o := s.LockOptions()
		o.Addr = px.Addr()
		rdb := redis.NewClient(o)
		t.Cleanup(func() { rdb.Close() })
		rc := redistest.Relock(t, rdb, &relock.Options{WatchdogTimeout: lease, Logger: quiet})
		t.Cleanup(func() {
			// What is left in the background against a failed server
			// is not waited for.
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			_ = rc.Shutdown(ctx)
		})
		servers, proxies = append(servers, s), append(proxies, px)
		rcs, rdbs = append(rcs, rc), append(rdbs, rdb)
		direct = append(direct, s.Client(t))
	}
	ctx := context.Background()
	calls := p.setup(t, ctx, rcs, rdbs)
	before := keysOf(t, direct)
	for i := range nodes {
		o.cut(t, servers[i], proxies[i])
	}
	for _, c := range calls {
		cctx, cancel := context.WithTimeout(ctx, deadline)
		start := time.Now()
		err := c.run(cctx)
		took := time.Since(start)
		ended := took >= deadline || cctx.Err() != nil
		cancel()
		t.Logf("%s: %v (overshoot %v): %v", c.name, took.Round(time.Millisecond), (took - deadline).Round(time.Millisecond), err)
		if took > deadline+margin {
			t.Errorf("%s took %v with a %v deadline", c.name, took, deadline)
		}
		switch {
		case err == nil:
			t.Errorf("%s: no error against a failed server", c.name)
		case o.refused && !c.waits:
			// Refused at once: a connection error, before the deadline.
		case !ended:
			// Redis's error came first (RedLock's NodeTimeout).
		case c.held != nil && errors.Is(context.Cause(c.held), relock.ErrLockLost) && errors.Is(err, context.Canceled):
			// The lease ran out first, on a loaded machine.
		case !errors.Is(err, context.DeadlineExceeded):
			t.Errorf("%s: %v does not match context.DeadlineExceeded", c.name, err)
		case c.acquire && !errors.Is(err, relock.ErrNotAcquired):
			t.Errorf("%s: %v does not match relock.ErrNotAcquired", c.name, err)
		}
		if err != nil && strings.Contains(err.Error(), "replica") {
			t.Errorf("%s: %v mentions replica sync", c.name, err)
		}
	}
	for _, s := range servers {
		if o.name == "Stopped" {
			if err := s.Resume(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// What the primitive held when the server froze, or took when it
	// ran the calls queued meanwhile, ends within the lease: renewals
	// stopped with the failed unlocks, and acquires whose replies were
	// lost are undone or left to their leases.
	var left []string
	defer func() {
		if t.Failed() {
			t.Logf("keys left: %v", left)
		}
	}()
	redistest.Eventually(t, lease+3*time.Second, "the locks' keys gone", func() bool {
		left = lockKeys(t, direct, before)
		return len(left) == 0
	})
}

// keysOf returns the keys of the servers, sorted.
func keysOf(t *testing.T, rdbs []*redis.Client) map[string]bool {
	t.Helper()
	keys := make(map[string]bool)
	for _, rdb := range rdbs {
		ks, err := rdb.Keys(context.Background(), "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			keys[k] = true
		}
	}
	return keys
}

// lockKeys returns the keys of the servers that hold a lease (a lock's
// hash, a read hold's timeout key): what must run out. Counts without a
// TTL (semaphore permits, latch counts, fencing counters) stay; the
// keys present before the outage (keep) are checked for their lease
// only.
func lockKeys(t *testing.T, rdbs []*redis.Client, keep map[string]bool) []string {
	t.Helper()
	var held []string
	for _, rdb := range rdbs {
		ks, err := rdb.Keys(context.Background(), "*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			ttl, err := rdb.PTTL(context.Background(), k).Result()
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(k, "relock_lock_gone:") || strings.HasPrefix(k, "relock_lock_gone_due:") {
				// A record of given-up attempts and its index, which a
				// cut-off call writes once the server answers: no hold,
				// and it lasts the lease. It must expire (-2: gone
				// already).
				if ttl == -1 {
					t.Errorf("%s has no expiry", k)
				}
				continue
			}
			if ttl > 0 || !keep[k] && ttl == -1 && isLockKey(t, rdb, k) {
				held = append(held, k)
			}
		}
	}
	sort.Strings(held)
	return held
}

// isLockKey reports a hash: a lock record, which always has a lease.
func isLockKey(t *testing.T, rdb *redis.Client, k string) bool {
	typ, err := rdb.Type(context.Background(), k).Result()
	if err != nil {
		t.Fatal(err)
	}
	return typ == "hash" && !strings.Contains(k, "election")
}

// hold locks l for a fresh owner and returns the lock's context.
func hold(t *testing.T, ctx context.Context, l interface {
	Lock(context.Context) (context.Context, error)
}) context.Context {
	t.Helper()
	lctx, err := l.Lock(relock.WithNewOwner(ctx))
	if err != nil {
		t.Fatal(err)
	}
	return lctx
}

// locker is what the Locker-shaped primitives share.
func lockerCalls(t *testing.T, ctx context.Context, mk func(what string) relock.Locker) []call {
	held := hold(t, ctx, mk("held"))
	free := mk("free")
	return []call{
		{name: "Unlock", held: held, run: func(ctx context.Context) error {
			return mk("held").Unlock(withDeadlineOf(held, ctx))
		}},
		{name: "Lock", acquire: true, waits: true, run: func(ctx context.Context) error {
			_, err := free.Lock(relock.WithNewOwner(ctx))
			return err
		}},
		{name: "TryLock(0)", acquire: true, run: func(ctx context.Context) error {
			_, err := free.TryLock(relock.WithNewOwner(ctx), 0)
			return err
		}},
		{name: "TryLock(10s)", acquire: true, waits: true, run: func(ctx context.Context) error {
			_, err := free.TryLock(relock.WithNewOwner(ctx), 10*time.Second)
			return err
		}},
		{name: "Do", acquire: true, waits: true, run: func(ctx context.Context) error {
			return relock.Do(relock.WithNewOwner(ctx), free, func(context.Context) error { return nil })
		}},
	}
}

// withDeadlineOf returns lctx, a lock's context, bounded by ctx's
// deadline: the call is timed by ctx while the owner is lctx's. The
// context is cancelled when the test ends.
func withDeadlineOf(lctx, ctx context.Context) context.Context {
	d, _ := ctx.Deadline()
	c, cancel := context.WithDeadline(lctx, d)
	cancels.Lock()
	defer cancels.Unlock()
	cancels.fns = append(cancels.fns, cancel)
	return c
}

// cancels collects withDeadlineOf's cancel funcs.
var cancels struct {
	sync.Mutex
	fns []context.CancelFunc
}

var primitives = []primitive{
	{name: "reentrant", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		return lockerCalls(t, ctx, func(what string) relock.Locker { return reentrant.New(rcs[0], "re:"+what+":"+t.Name(), nil) })
	}},
	{name: "fair", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		return lockerCalls(t, ctx, func(what string) relock.Locker { return fair.New(rcs[0], "fair:"+what+":"+t.Name(), nil) })
	}},
	{name: "rwlock", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		calls := lockerCalls(t, ctx, func(what string) relock.Locker { return rwlock.New(rcs[0], "rw:"+what+":"+t.Name(), nil).Writer() })
		rw := rwlock.New(rcs[0], "rw:read:"+t.Name(), nil)
		rctx, err := rw.RLock(relock.WithNewOwner(ctx))
		if err != nil {
			t.Fatal(err)
		}
		free := rwlock.New(rcs[0], "rw:rfree:"+t.Name(), nil)
		return append(calls,
			call{name: "RLock", acquire: true, waits: true, run: func(ctx context.Context) error {
				_, err := free.RLock(relock.WithNewOwner(ctx))
				return err
			}},
			call{name: "RUnlock", held: rctx, run: func(ctx context.Context) error { return rw.RUnlock(withDeadlineOf(rctx, ctx)) }},
		)
	}},
	{name: "spinlock", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		return lockerCalls(t, ctx, func(what string) relock.Locker { return spinlock.New(rcs[0], "spin:"+what+":"+t.Name(), nil) })
	}},
	{name: "nonreentrant", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		return lockerCalls(t, ctx, func(what string) relock.Locker {
			return nonreentrant.New(rcs[0], "nr:"+what+":"+t.Name(), nil)
		})
	}},
	{name: "multilock", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		return lockerCalls(t, ctx, func(what string) relock.Locker {
			ml := multilock.New(reentrant.New(rcs[0], "ml:a:"+what+":"+t.Name(), nil), fair.New(rcs[0], "ml:b:"+what+":"+t.Name(), nil))
			return ml
		})
	}},
	{name: "redlock", nodes: 3, setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		return lockerCalls(t, ctx, func(what string) relock.Locker {
			rl := redlock.New(rcs, "rl:"+what+":"+t.Name(), nil)
			return rl
		})
	}},
	{name: "semaphore", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		s := semaphore.New(rcs[0], "sem:"+t.Name(), nil)
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := s.Acquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		return []call{
			{name: "Acquire", acquire: true, waits: true, run: func(ctx context.Context) error { return s.Acquire(ctx, 1) }},
			{name: "TryAcquire(0)", acquire: true, run: func(ctx context.Context) error { return s.TryAcquire(ctx, 1, 0) }},
			{name: "TryAcquire(10s)", acquire: true, waits: true, run: func(ctx context.Context) error { return s.TryAcquire(ctx, 1, 10*time.Second) }},
			{name: "Release", run: func(ctx context.Context) error { return s.Release(ctx, 1) }},
			{name: "AvailablePermits", run: func(ctx context.Context) error {
				_, err := s.AvailablePermits(ctx)
				return err
			}},
		}
	}},
	{name: "permits", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		s := permits.New(rcs[0], "permits:"+t.Name(), nil)
		if _, err := s.TrySetPermits(ctx, 1); err != nil {
			t.Fatal(err)
		}
		p, err := s.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return []call{
			{name: "Acquire", acquire: true, waits: true, run: func(ctx context.Context) error {
				_, err := s.Acquire(ctx)
				return err
			}},
			{name: "TryAcquire(0)", acquire: true, run: func(ctx context.Context) error {
				_, err := s.TryAcquire(ctx, 0)
				return err
			}},
			{name: "Release", run: func(ctx context.Context) error { return p.Release(ctx) }},
		}
	}},
	{name: "latch", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		l := latch.New(rcs[0], "latch:"+t.Name(), nil)
		if _, err := l.TrySetCount(ctx, 2); err != nil {
			t.Fatal(err)
		}
		return []call{
			{name: "Await", waits: true, run: func(ctx context.Context) error { return l.Await(ctx) }},
			{name: "TryAwait(10s)", waits: true, run: func(ctx context.Context) error {
				_, err := l.TryAwait(ctx, 10*time.Second)
				return err
			}},
			{name: "CountDown", run: func(ctx context.Context) error { return l.CountDown(ctx) }},
			{name: "Count", run: func(ctx context.Context) error {
				_, err := l.Count(ctx)
				return err
			}},
		}
	}},
	{name: "election", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, _ []redis.UniversalClient) []call {
		leader := election.New(rcs[0], "el:"+t.Name(), nil)
		// The set-up's lease is short: on a loaded machine it may be
		// lost before the leader is recorded (the campaign then fails
		// and leaves nothing), which is not what this test times.
		var lead context.Context
		var err error
		for range 3 {
			if lead, err = leader.Campaign(ctx, "a"); err == nil {
				break
			}
			t.Logf("set-up campaign: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		other := election.New(rcs[0], "el:"+t.Name(), nil)
		// The leader's calls come first, while its lease holds.
		return []call{
			{name: "Proclaim", held: lead, run: func(ctx context.Context) error { return leader.Proclaim(withDeadlineOf(lead, ctx), "c") }},
			{name: "Resign", held: lead, run: func(ctx context.Context) error { return leader.Resign(withDeadlineOf(lead, ctx)) }},
			{name: "Leader", run: func(ctx context.Context) error {
				_, err := other.Leader(ctx)
				return err
			}},
			{name: "Campaign", acquire: true, waits: true, run: func(ctx context.Context) error {
				_, err := other.Campaign(ctx, "b")
				return err
			}},
		}
	}},
	{name: "inspect", setup: func(t *testing.T, ctx context.Context, rcs []*relock.Client, rdbs []redis.UniversalClient) []call {
		hold(t, ctx, reentrant.New(rcs[0], "insp:"+t.Name(), &reentrant.Options{Lease: lease}))
		return []call{
			{name: "Read", run: func(ctx context.Context) error {
				_, err := inspect.Read(ctx, rdbs[0], "insp:"+t.Name())
				return err
			}},
			{name: "List", run: func(ctx context.Context) error {
				return inspect.List(ctx, rdbs[0], "*", func(string) error { return nil })
			}},
		}
	}},
}
