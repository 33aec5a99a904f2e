package latch_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// The churn's shape and bounds.
const (
	churnFor        = time.Second // how long the goroutines churn
	churnClients    = 4
	churnGoroutines = 2 // per client
	// churnSettle is how soon after the churn nothing of the latch may be
	// left in Redis: every client's lingering subscription (Linger,
	// 250 ms) has gone by then.
	churnSettle = 2 * time.Second
	// wakeBound is how soon after the latch opens for good every Await
	// still waiting must return.
	wakeBound = 500 * time.Millisecond
	// maxParked is how many Awaits without a deadline each goroutine
	// keeps waiting at once.
	maxParked = 2
)

// TestChurn puts on one latch the load of a service under churn: 4
// clients, each standing for a process of its own, 2 goroutines each, that set the
// count (TrySetCount of a small n), count down, Delete now and then, and
// wait in every way a caller does (Await with a deadline or a
// cancellation from another goroutine, TryAwait with a wait, TryAwait of
// 0, all of 0-3 ms, and Awaits without a deadline left waiting in the
// background), while one client is closed halfway. It proves:
//
//   - every wait's answer was true of the latch while the call ran: an
//     Await or TryAwait that reported the latch open saw it open at
//     some moment after it began (no stale "0", no wrong read), and a
//     TryAwait that reported it closed saw it closed at some moment;
//   - the count is right at every moment: a count is set only on an
//     open latch, to n; each CountDown that ran takes one off, and the
//     one that reaches zero deletes the count in the same script; the
//     count read at random moments is what the history implies; and as
//     many sets, count-downs and deletes ran as the calls' results
//     allow (those that returned an error may or may not have run);
//   - no waiter stays blocked on a latch that is open and stays open:
//     once the churn stops, the latch is closed and opened again, once
//     by a Delete and once by counting it down to zero, and each time
//     every Await still waiting (the churn's, and two more on each open
//     client) returns within wakeBound;
//   - a wait leaves nothing in Redis: once the waits are over, no
//     client keeps the latch's channel subscribed past its linger
//     (PUBSUB NUMSUB 0, the clients still open), no key of the name is
//     left on the open latch, and a fresh client's TryAwait(0) finds it
//     open at once.
//
// The history is the server's own order: the test subscribes to the
// keyspace events of the latch's key (set, DECR, del) and, on the same
// connection, to a channel of its own where it publishes a mark before
// and after each wait and with each read of the count (in the same
// MULTI), so that one connection receives them all in the order the
// server ran them. TestChurnCatches shows these checks fail on what they
// look for.
func TestChurn(t *testing.T) {
	redistest.SkipShort(t, "the churn runs for a second and more")
	srv.RequireReal(t) // keyspace events, PUBSUB NUMSUB
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	c := newChurn(t, redistest.Key(t), seed)
	c.run()
}

// TestChurnCatches shows that TestChurn's checks fail on what they look
// for. settle, as the churn calls it once every client closed, reports a
// count left on the opened latch, a key of relock's own naming the latch
// and a subscription of its channel. replay, given a history, reports a
// wait that reported the latch open while it was closed from before the
// call until after it, and one that reported it closed while it was
// open all along; a count read other than the history implies; a
// CountDown that took the count to zero and left it; and a count set on
// a closed latch. bounds reports a CountDown that counted twice.
func TestChurnCatches(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	channel := channelOf(name)
	own := "relock_latch_waiters:{" + name + "}"
	if err := raw.Set(bg, name, 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	raw.HSet(bg, own, "00000000-0000-8000-8000-000000000000", 1)
	defer raw.Del(bg, name, own)
	subscribe(t, srv.Client(t), channel)
	left := settle(t, raw, name, channel, nil, 0)
	for _, want := range []string{name + " (string", own + " (hash", "1 subscribers of " + channel} {
		if !slices.ContainsFunc(left, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("settle missed %q: %q", want, left)
		}
	}
	if len(left) != 3 {
		t.Errorf("settle = %q, want the count, the key and the subscription", left)
	}

	const n = 2
	waits := map[int64]waitResult{
		1: {how: "Await", open: true},
		2: {how: "TryAwait", closed: true},
		3: {how: "Await", open: true},
	}
	reads := map[int64]string{4: "2", 5: "0"}
	events := []event{
		{true, "set"},                  // closed, count 2
		{false, "b:1"}, {false, "e:1"}, // open, but closed throughout
		{false, "b:3"}, {true, "incrby"}, {true, "incrby"}, {true, "del"}, {false, "e:3"}, // open, and it opened: fine
		{true, "set"}, {true, "incrby"}, {false, "r:4"}, // count 1, read 2
		{true, "incrby"}, {false, "r:5"}, // count 0, and no del
		{true, "del"},
		{false, "b:2"}, {false, "e:2"}, // closed, but open throughout
		{true, "set"}, {true, "set"}, // a set on a closed latch
	}
	h, problems := replay(events, n, waits, reads, nil)
	for _, want := range []string{
		"wait 1, Await, reported the latch open",
		"wait 2, TryAwait, reported the latch closed",
		`the count read "2", the history says "1"`,
		"a CountDown took the count to 0 and left it",
		"a count set on a closed latch",
	} {
		if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("replay missed %q: %q", want, problems)
		}
	}
	if len(problems) != 5 {
		t.Errorf("replay = %q, want 5 problems", problems)
	}
	// The del after the count left at zero counts as a Delete's.
	if h != (history{sets: 4, downs: 4, deletes: 1, openings: 2}) {
		t.Errorf("replay's history = %+v", h)
	}
	var s churnStats
	s.setTrue.Store(4)
	s.delTrue.Store(1)
	s.downOK.Store(3) // 4 ran: one counted twice
	if p := s.bounds(h); len(p) != 1 || !strings.Contains(p[0], "4 count-downs ran in Redis; the calls allow 3 to 3") {
		t.Errorf("bounds = %q, want the count-down that counted twice", p)
	}
}

// A churn is one run of TestChurn on one latch name.
type churn struct {
	t       *testing.T
	name    string
	channel string // the latch's channel
	marks   string // the test's channel for marks
	n       int64  // the count TrySetCount sets
	seed    uint64
	raw     *redis.Client // the test's own, for marks and reads
	log     *eventLog

	// parkCtx ends the Awaits left waiting, should any outlive the
	// test's bounds: stopParked cancels it.
	parkCtx    context.Context
	stopParked context.CancelFunc
	parked     sync.WaitGroup
	waiting    atomic.Int64 // parked Awaits that have not returned

	ids   atomic.Int64 // numbers the waits and reads marked in the log
	mu    sync.Mutex   // guards waits, reads and unexpected
	waits map[int64]waitResult
	reads map[int64]string // GET's reply at each read mark, "" for none
	// unexpected lists errors no call should return.
	unexpected []string

	stats churnStats
}

// churnStats counts the calls' results.
type churnStats struct {
	setTrue, setFalse, setErr atomic.Int64
	downOK, downErr           atomic.Int64
	delTrue, delFalse, delErr atomic.Int64
	open, closed, ended       atomic.Int64 // waits
	gone                      atomic.Int64 // waits and calls ended by Close
}

// A waitResult is what one wait returned.
type waitResult struct {
	how    string
	open   bool // it reported the latch open
	closed bool // it reported the latch closed (TryAwait's false, nil)
	err    error
}

func newChurn(t *testing.T, name string, seed uint64) *churn {
	parkCtx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c := &churn{
		t: t, name: name, channel: channelOf(name), marks: "latch-churn-marks:" + strconv.FormatUint(seed, 10),
		n: 1 + int64(seed%3), seed: seed, raw: srv.Client(t), parkCtx: parkCtx, stopParked: cancel,
		waits: make(map[int64]waitResult), reads: make(map[int64]string),
	}
	c.log = startLog(t, srv, name, c.marks)
	return c
}

// run runs the churn and its checks.
func (c *churn) run() {
	t, bg := c.t, context.Background()
	clients := make([]*relock.Client, churnClients)
	for i := range clients {
		rc, err := relock.New(srv.LockClient(t), &relock.Options{Linger: redistest.Linger})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		clients[i] = rc
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, rc := range clients {
		l := latch.New(rc, c.name, nil)
		for g := range churnGoroutines {
			rng := rand.New(rand.NewPCG(c.seed, uint64(i*churnGoroutines+g)))
			wg.Go(func() { c.loop(l, rng, stop) })
		}
	}
	wg.Go(func() { c.reader(stop) })
	// One client goes away halfway, its goroutines and parked Awaits
	// still at work: they end with relock.ErrClosed.
	time.Sleep(churnFor / 2)
	if err := clients[0].Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	time.Sleep(churnFor - churnFor/2)
	close(stop)
	wg.Wait()

	// The latch closed again and opened, once by a Delete and once by
	// counting it down to zero: each time, every Await still waiting,
	// the churn's and two more on each open client, returns.
	drv := latch.New(clients[1], c.name, nil)
	for _, byDelete := range []bool{c.seed%2 == 0, c.seed%2 != 0} {
		c.setCount(bg, drv)
		for _, rc := range clients[1:] {
			for range 2 {
				c.park(latch.New(rc, c.name, nil), nil)
			}
		}
		redistest.Eventually(t, limit, "the parked Awaits asleep", func() bool { return int64(asleep()) >= c.waiting.Load() })
		how, opened := c.open(drv, byDelete)
		if n := c.parkedReturn(opened); n > 0 {
			t.Errorf("%d Awaits still waiting %v after the latch opened for good (%s)", n, wakeBound, how)
		}
	}

	// Nothing subscribed once the waits are over, the clients still
	// open: each client's channel goes after its linger.
	if left := settle(t, c.raw, c.name, c.channel, nil, churnSettle); len(left) > 0 {
		t.Errorf("left %v after the last wait, the clients open: %s", churnSettle, strings.Join(left, "; "))
	}
	for _, rc := range clients[1:] {
		if err := rc.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if left := settle(t, c.raw, c.name, c.channel, nil, churnSettle); len(left) > 0 {
		t.Errorf("left %v after every client closed: %s", churnSettle, strings.Join(left, "; "))
	}

	events := c.log.stop(t, c.raw)
	c.mu.Lock()
	h, problems := replay(events, c.n, c.waits, c.reads, c.log.times())
	problems = append(problems, c.unexpected...)
	c.mu.Unlock()
	problems = append(problems, c.stats.bounds(h)...)
	for i, p := range problems {
		if i == 20 {
			t.Errorf("and %d more", len(problems)-i)
			break
		}
		t.Error(p)
	}
	s := &c.stats
	t.Logf("count %d; TrySetCount: %d true, %d false, %d errors; CountDown: %d nil, %d errors; Delete: %d true, %d false, %d errors; "+
		"waits: %d open, %d closed, %d ended, %d closed by Close; in Redis: %d sets, %d count-downs, %d deletes, %d openings",
		c.n, s.setTrue.Load(), s.setFalse.Load(), s.setErr.Load(), s.downOK.Load(), s.downErr.Load(),
		s.delTrue.Load(), s.delFalse.Load(), s.delErr.Load(), s.open.Load(), s.closed.Load(), s.ended.Load(), s.gone.Load(),
		h.sets, h.downs, h.deletes, h.openings)
	if h.openings < 10 || s.open.Load() < 10 || s.closed.Load()+s.ended.Load() < 10 {
		t.Error("the churn opened the latch, or found it open or closed, too seldom to prove anything")
	}

	// A fresh call succeeds at once: one look at the count finds the
	// latch open.
	fresh := latch.New(newClient(t), c.name, nil)
	start := time.Now()
	if ok, err := fresh.TryAwait(bg, 0); !ok || err != nil {
		t.Fatalf("a fresh TryAwait(0) after the churn = %v, %v; want true", ok, err)
	}
	t.Logf("a fresh TryAwait(0) found the latch open in %v", time.Since(start))
}

// loop is one goroutine's churn, until stop is closed or its client
// closes.
func (c *churn) loop(l *latch.Latch, rng *rand.Rand, stop <-chan struct{}) {
	parked := new(atomic.Int64)
	for {
		select {
		case <-stop:
			return
		default:
		}
		var err error
		switch r := rng.IntN(100); {
		case r < 20:
			err = c.giveUp(rng, func(ctx context.Context) error { return c.setCount(ctx, l) })
		case r < 50:
			err = c.giveUp(rng, func(ctx context.Context) error { return c.countDown(ctx, l) })
		case r < 55:
			err = c.giveUp(rng, func(ctx context.Context) error { return c.delete(ctx, l) })
		case r < 60 && parked.Load() < maxParked:
			c.park(l, parked)
		default:
			err = c.await(l, rng)
		}
		if errors.Is(err, relock.ErrClosed) {
			return
		}
	}
}

// giveUp runs call on a context that ends after 0-3 ms in one of the
// ways a caller gives up, which rng picks (a deadline, a cancellation
// from another goroutine), or only after limit.
func (c *churn) giveUp(rng *rand.Rand, call func(ctx context.Context) error) error {
	after := time.Duration(rng.IntN(3000)) * time.Microsecond
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	switch rng.IntN(3) {
	case 0:
		dctx, dcancel := context.WithTimeout(ctx, after)
		defer dcancel()
		return call(dctx)
	case 1:
		stop := time.AfterFunc(after, cancel)
		defer stop.Stop()
	}
	return call(ctx)
}

// setCount, countDown and delete make one call and count its result.
// An error from a call made on a context that ended, or on a closed
// client, leaves it unknown whether the call ran; any other is
// unexpected.

func (c *churn) setCount(ctx context.Context, l *latch.Latch) error {
	ok, err := l.TrySetCount(ctx, c.n)
	switch {
	case err != nil:
		c.failed(ctx, "TrySetCount", err, &c.stats.setErr)
	case ok:
		c.stats.setTrue.Add(1)
	default:
		c.stats.setFalse.Add(1)
	}
	return err
}

func (c *churn) countDown(ctx context.Context, l *latch.Latch) error {
	err := l.CountDown(ctx)
	if err != nil {
		c.failed(ctx, "CountDown", err, &c.stats.downErr)
	} else {
		c.stats.downOK.Add(1)
	}
	return err
}

func (c *churn) delete(ctx context.Context, l *latch.Latch) error {
	ok, err := l.Delete(ctx)
	switch {
	case err != nil:
		c.failed(ctx, "Delete", err, &c.stats.delErr)
	case ok:
		c.stats.delTrue.Add(1)
	default:
		c.stats.delFalse.Add(1)
	}
	return err
}

// failed counts a write's error in n, and records it as unexpected
// unless its context ended or its client closed.
func (c *churn) failed(ctx context.Context, op string, err error, n *atomic.Int64) {
	n.Add(1)
	if errors.Is(err, relock.ErrClosed) {
		c.stats.gone.Add(1)
		return
	}
	if !gaveUp(ctx, err) {
		c.mu.Lock()
		c.unexpected = append(c.unexpected, fmt.Sprintf("%s: unexpected error %v (context: %v)", op, err, ctx.Err()))
		c.mu.Unlock()
	}
}

// gaveUp reports whether err is the end of ctx: cancelled, or past its
// deadline (which may cut a call off before ctx's own timer fires).
func gaveUp(ctx context.Context, err error) bool {
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) && errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return ctx.Err() != nil && errors.Is(err, ctx.Err())
}

// await makes one wait that gives up after 0-3 ms, in one of the ways
// rng picks, between marks.
func (c *churn) await(l *latch.Latch, rng *rand.Rand) error {
	after := time.Duration(rng.IntN(3000)) * time.Microsecond
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	switch rng.IntN(4) {
	case 0:
		dctx, dcancel := context.WithTimeout(ctx, after)
		defer dcancel()
		return c.wait(dctx, "Await with a deadline", false, func() (bool, error) { return true, l.Await(dctx) })
	case 1:
		stop := time.AfterFunc(after, cancel)
		defer stop.Stop()
		return c.wait(ctx, "Await cancelled", false, func() (bool, error) { return true, l.Await(ctx) })
	case 2:
		return c.wait(ctx, fmt.Sprintf("TryAwait(%v)", after), true, func() (bool, error) { return l.TryAwait(ctx, after) })
	}
	return c.wait(ctx, "TryAwait(0)", true, func() (bool, error) { return l.TryAwait(ctx, 0) })
}

// park starts an Await without a deadline in the background, counted in
// parked (nil: in nobody's).
func (c *churn) park(l *latch.Latch, parked *atomic.Int64) {
	if parked != nil {
		parked.Add(1)
	}
	c.waiting.Add(1)
	ctx := c.parkCtx
	c.parked.Go(func() {
		defer c.waiting.Add(-1)
		if parked != nil {
			defer parked.Add(-1)
		}
		_ = c.wait(ctx, "Await without a deadline", false, func() (bool, error) { return true, l.Await(ctx) })
	})
}

// wait runs one wait, call, between a mark before it and one after it,
// and records its result. A wait whose context cannot end but for the
// test's bounds (try: a TryAwait, whose running out is false, nil) must
// not fail but for a closed client.
func (c *churn) wait(ctx context.Context, how string, try bool, call func() (bool, error)) error {
	id := c.ids.Add(1)
	c.mark("b", id)
	ok, err := call()
	c.mark("e", id)
	r := waitResult{how: how, open: ok && err == nil, closed: !ok && err == nil, err: err}
	switch {
	case r.open:
		c.stats.open.Add(1)
	case r.closed:
		c.stats.closed.Add(1)
	case errors.Is(err, relock.ErrClosed):
		c.stats.gone.Add(1)
	case !try && gaveUp(ctx, err):
		c.stats.ended.Add(1)
	default:
		c.mu.Lock()
		c.unexpected = append(c.unexpected, fmt.Sprintf("%s: unexpected error %v (context: %v)", how, err, ctx.Err()))
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.waits[id] = r
	c.mu.Unlock()
	return err
}

// mark publishes kind:id on the marks channel and returns once the
// server ran it.
func (c *churn) mark(kind string, id int64) {
	if err := c.raw.Publish(context.Background(), c.marks, kind+":"+strconv.FormatInt(id, 10)).Err(); err != nil {
		c.t.Errorf("mark: %v", err)
	}
}

// reader reads the count every few milliseconds until stop is closed,
// with a mark in the same MULTI, so that the history tells what the
// count was at that moment.
func (c *churn) reader(stop <-chan struct{}) {
	bg := context.Background()
	for {
		select {
		case <-stop:
			return
		case <-time.After(3 * time.Millisecond):
		}
		id := c.ids.Add(1)
		var get *redis.StringCmd
		_, err := c.raw.TxPipelined(bg, func(p redis.Pipeliner) error {
			get = p.Get(bg, c.name)
			p.Publish(bg, c.marks, "r:"+strconv.FormatInt(id, 10))
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			c.t.Errorf("read: %v", err)
			return
		}
		c.mu.Lock()
		c.reads[id] = get.Val()
		c.mu.Unlock()
	}
}

// open opens the latch, by a Delete or by counting it down to zero, and
// returns how, and when the call that opened it returned.
func (c *churn) open(l *latch.Latch, byDelete bool) (string, time.Time) {
	bg := context.Background()
	if byDelete {
		if c.delete(bg, l) != nil {
			c.t.Fatal("Delete failed")
		}
		return "by a Delete", time.Now()
	}
	n, err := l.Count(bg)
	if err != nil {
		c.t.Fatal(err)
	}
	for range n {
		if c.countDown(bg, l) != nil {
			c.t.Fatal("CountDown failed")
		}
	}
	return fmt.Sprintf("by %d CountDowns", n), time.Now()
}

// parkedReturn waits for every parked Await to return, and returns how
// many had not within wakeBound of opened, which it then ends.
func (c *churn) parkedReturn(opened time.Time) int64 {
	done := make(chan struct{})
	go func() {
		c.parked.Wait()
		close(done)
	}()
	t := time.NewTimer(time.Until(opened.Add(wakeBound)))
	defer t.Stop()
	select {
	case <-done:
		return 0
	case <-t.C:
	}
	n := c.waiting.Load()
	c.t.Logf("%d goroutines asleep in the wait loop", asleep())
	c.stopParked()
	<-done
	// A fresh context for the Awaits parked later.
	c.parkCtx, c.stopParked = context.WithCancel(context.Background())
	c.t.Cleanup(c.stopParked)
	return n
}

// settle waits up to within for nothing of name to be left in Redis but
// the keys allowed lets be (nil: none), and for channel to have no
// subscriber, and describes what is left then.
func settle(t *testing.T, raw *redis.Client, name, channel string, allowed func(key string) bool, within time.Duration) []string {
	t.Helper()
	if allowed == nil {
		allowed = func(string) bool { return false }
	}
	deadline := time.Now().Add(within)
	for {
		left := (&locktest.Churn{Name: name, Raw: raw, Left: allowed}).Leftovers(t)
		if n := raw.PubSubNumSub(context.Background(), channel).Val()[channel]; n != 0 {
			left = append(left, fmt.Sprintf("%d subscribers of %s", n, channel))
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// An event is one message of the history: a keyspace event of the
// latch's key (set, incrby or decrby, del), or one of the test's marks
// ("b:<id>" and "e:<id>" around wait id, "r:<id>" with read id).
type event struct {
	key     bool
	payload string
}

// staleOpening is how long before an Await began an opening may be that
// the Await reports: its message may still be on its way to the client.
const staleOpening = 100 * time.Millisecond

// times returns when each event reached the log.
func (l *eventLog) times() []time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.at
}

// An eventLog receives the history, in the order the server ran it.
type eventLog struct {
	sub   *redis.PubSub
	marks string
	done  chan struct{}

	mu     sync.Mutex // guards events, at and err
	events []event
	at     []time.Time // when each event reached the log
	err    error
}

// startLog turns on keyspace events of string and generic commands on s
// (as they were after t) and subscribes one connection to those of name
// and to marks.
func startLog(t *testing.T, s *redistest.Server, name, marks string) *eventLog {
	t.Helper()
	bg := context.Background()
	admin := s.Client(t)
	was, err := admin.ConfigGet(bg, "notify-keyspace-events").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(bg, "notify-keyspace-events", "K$g").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.ConfigSet(bg, "notify-keyspace-events", was["notify-keyspace-events"]) })
	sub := s.Client(t).Subscribe(bg, "__keyspace@0__:"+name, marks)
	t.Cleanup(func() { sub.Close() })
	for range 2 {
		if _, err := sub.Receive(bg); err != nil {
			t.Fatal(err)
		}
	}
	l := &eventLog{sub: sub, marks: marks, done: make(chan struct{})}
	go l.receive()
	return l
}

func (l *eventLog) receive() {
	defer close(l.done)
	for {
		msg, err := l.sub.ReceiveMessage(context.Background())
		l.mu.Lock()
		if err != nil {
			l.err = err
			l.mu.Unlock()
			return
		}
		if msg.Channel == l.marks && msg.Payload == "end" {
			l.mu.Unlock()
			return
		}
		l.events = append(l.events, event{key: msg.Channel != l.marks, payload: msg.Payload})
		l.at = append(l.at, time.Now())
		l.mu.Unlock()
	}
}

// stop marks the end of the history, and returns it once received.
func (l *eventLog) stop(t *testing.T, raw *redis.Client) []event {
	t.Helper()
	if err := raw.Publish(context.Background(), l.marks, "end").Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.done:
	case <-time.After(limit):
		t.Fatal("the end of the history did not arrive")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		t.Fatalf("the history broke off: %v", l.err)
	}
	return l.events
}

// A history is what replay found in Redis's events.
type history struct {
	sets, downs, deletes int // each script's runs
	openings             int // the count went: by a CountDown or a Delete
}

// replay plays the latch's history, whose count is set to n, and
// reports each thing in it that breaks the latch's rules: a count set on
// a closed latch; a CountDown that reached zero and left the count; a
// count read other than the history implies; a wait that reported the
// latch open though it was closed from before the wait began until after
// it returned (waits[id].open), or closed though it was open all along
// (waits[id].closed). With at, when each event reached the log, a wait
// that reported an opening that reached the log less than staleOpening
// before the wait began is not reported: the opening's message may reach
// the waiter's client after the wait began (latch's doc, "an opening
// just before").
func replay(events []event, n int64, waits map[int64]waitResult, reads map[int64]string, at []time.Time) (history, []string) {
	var (
		h        history
		problems []string
		exists   bool
		count    int64
		zeroed   bool // a CountDown took the count to zero or below: its del is next
		sets     int  // sets so far, for the waits
		begun    = make(map[int64]struct {
			open        bool
			sets, opens int
			recent      bool // an opening reached the log less than staleOpening before
		})
		lastOpen time.Time // when the last opening reached the log
	)
	for i, e := range events {
		if zeroed && !(e.key && e.payload == "del") {
			problems = append(problems, fmt.Sprintf("event %d: a CountDown took the count to %d and left it (next: %+v)", i, count, e))
			zeroed = false
		}
		if e.key {
			switch e.payload {
			case "set":
				h.sets++
				sets++
				if exists {
					problems = append(problems, fmt.Sprintf("event %d: a count set on a closed latch (count %d)", i, count))
				}
				exists, count = true, n
			case "incrby", "decrby": // DECR's event is incrby
				h.downs++
				if !exists {
					count = 0
				}
				exists, count = true, count-1
				zeroed = count <= 0
			case "del":
				if !exists {
					problems = append(problems, fmt.Sprintf("event %d: a del of no count", i))
				}
				if !zeroed {
					h.deletes++
				}
				if !zeroed || count == 0 {
					h.openings++
					if at != nil {
						lastOpen = at[i]
					}
				}
				exists, zeroed = false, false
			default:
				problems = append(problems, fmt.Sprintf("event %d: unexpected keyspace event %q", i, e.payload))
			}
			continue
		}
		kind, num, _ := strings.Cut(e.payload, ":")
		id, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			problems = append(problems, fmt.Sprintf("event %d: unexpected mark %q", i, e.payload))
			continue
		}
		switch kind {
		case "r":
			want := ""
			if exists {
				want = strconv.FormatInt(count, 10)
			}
			if got := reads[id]; got != want {
				problems = append(problems, fmt.Sprintf("event %d: the count read %q, the history says %q", i, got, want))
			}
		case "b":
			begun[id] = struct {
				open        bool
				sets, opens int
				recent      bool
			}{!exists, sets, h.openings, at != nil && !lastOpen.IsZero() && at[i].Sub(lastOpen) < staleOpening}
		case "e":
			b, ok := begun[id]
			r := waits[id]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("event %d: wait %d ended before it began", i, id))
			case r.open && !b.open && h.openings == b.opens && !b.recent:
				problems = append(problems, fmt.Sprintf("wait %d, %s, reported the latch open; it was closed from before the call until after it", id, r.how))
			case r.closed && b.open && sets == b.sets:
				problems = append(problems, fmt.Sprintf("wait %d, %s, reported the latch closed; it was open from before the call until after it", id, r.how))
			}
		}
	}
	return h, problems
}

// bounds reports a history whose runs of each script the calls'
// results do not allow: each call that returned a result ran once,
// each that failed at most once.
func (s *churnStats) bounds(h history) []string {
	var problems []string
	check := func(what string, ran int, sure, failed int64) {
		if int64(ran) < sure || int64(ran) > sure+failed {
			problems = append(problems, fmt.Sprintf("%d %s ran in Redis; the calls allow %d to %d", ran, what, sure, sure+failed))
		}
	}
	check("sets", h.sets, s.setTrue.Load(), s.setErr.Load())
	check("count-downs", h.downs, s.downOK.Load(), s.downErr.Load())
	check("deletes", h.deletes, s.delTrue.Load(), s.delErr.Load())
	return problems
}

// TestCloseDuringWaits sharpens the churn's client closed halfway: Close
// lands while goroutines of the client wait and count down without a
// pause, and each call it cuts off, a read of the count under way
// included, fails with relock.ErrClosed, as documented, and not with
// go-redis's "client is closed" (which Await returned before: Close shuts
// the connections a read may be using).
func TestCloseDuringWaits(t *testing.T) {
	bg := context.Background()
	for round := range redistest.Short(20, 8) {
		rc := redistest.Relock(t, srv.LockClient(t), nil)
		l := latch.New(rc, redistest.Key(t), nil)
		if _, err := l.TrySetCount(bg, 1000); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		start := time.Now()
		for g := range 8 {
			wg.Go(func() {
				for i := 0; time.Since(start) < limit; i++ {
					var err error
					switch {
					case g%4 == 3:
						err = l.CountDown(bg)
					case i%2 == 0:
						_, err = l.TryAwait(bg, 0)
					default:
						_, err = l.TryAwait(bg, time.Millisecond)
					}
					if err != nil {
						errs <- err
						return
					}
				}
				errs <- fmt.Errorf("calls still succeed %v after Close", limit)
			})
		}
		time.Sleep(time.Duration(1+round%5) * time.Millisecond)
		if err := rc.Close(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, relock.ErrClosed) {
				t.Errorf("round %d: a call cut off by Close: %v, want relock.ErrClosed", round, err)
			}
		}
	}
}
