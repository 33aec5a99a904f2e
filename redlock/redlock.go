package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// Defaults of Options.
const (
	DefaultNodeTimeout = 100 * time.Millisecond
	DefaultDriftFactor = 0.01
	DefaultRetryMin    = 50 * time.Millisecond
	DefaultRetryMax    = 250 * time.Millisecond
)

// Options configure a RedLock. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease; zero (the default) lets each master's
	// client watchdog renew it, with the clients' WatchdogTimeout as the
	// lease. At least 1ms.
	Lease time.Duration
	// NodeTimeout cuts off each call to a master: acquires, the undo of
	// a failed attempt, unlocks. It must be far below the lease: the
	// time spent waiting comes off the validity. Default
	// DefaultNodeTimeout.
	NodeTimeout time.Duration
	// DriftFactor is the share of the lease allowed for clock drift
	// between masters. Default DefaultDriftFactor.
	DriftFactor float64
	// RetryMin and RetryMax bound the random delay between attempts.
	// Defaults DefaultRetryMin and DefaultRetryMax.
	RetryMin, RetryMax time.Duration
}

// A RedLock is a lock held by a quorum of independent masters. It is
// cheap to create, does no I/O until used, and is safe for concurrent
// use. Create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type RedLock struct {
	name string
	keys []string // the lock hash, its channel and relock's waiter registry on every master
	// acquireKeys are the acquire's KEYS: the lock hash, the registry
	// and relock's record of given-up attempts (layout.LockGone); goneDue
	// is the record's index of when entries may go (layout.LockGoneDue).
	acquireKeys []string
	goneDue     string
	nodes       []*core.Client
	quorum      int
	lease       time.Duration // fixed lease, or the shortest watchdog timeout
	fixed       bool
	opts        Options
	err         error // bad input found by New, returned by every method

	// mu guards holds and the holds in it. It comes before core's locks
	// (internal/core's package doc) and is never held across a call into
	// core.
	mu    sync.Mutex
	holds map[int64]*hold // by owner
}

// errNil is the error of every operation of a nil *RedLock.
var errNil = core.NilReceiver("redlock", "RedLock")

// hold is one owner's holds of the RedLock.
type hold struct {
	count int
	down  map[int]bool // masters not holding it: never acquired, or lost
	// late holds, by master, the number of the last of the hold's
	// attempts that the master did not answer, which may still run
	// there: Unlock records it as given up there before it unlocks
	// (unlockNode).
	late map[int]int64
	ends core.Ends
}

var _ relock.Locker = (*RedLock)(nil)

// New returns the RedLock named name over clients, each talking to an
// independent Redis master. The clients come first, as the client does
// in every other package's New. Bad input (an invalid name, no clients, a nil
// or repeated one, a negative option, a NodeTimeout not below the lease)
// is not reported here but by every method of the returned RedLock, as
// an error matching relock.ErrInvalidArgument (or relock.ErrInvalidName).
// A repeated client is one of a server or cluster address already given;
// a Sentinel-managed master's client names no address (go-redis gives
// every failover client the same placeholder), so two clients of one
// Sentinel master are not caught: give each master one client.
func New(clients []*relock.Client, name string, opts *Options) *RedLock {
	rl := &RedLock{name: name, holds: make(map[int64]*hold), keys: []string{
		name, layout.LockChannel(name), layout.LockWaiters(name),
	}, acquireKeys: []string{name, layout.LockWaiters(name), layout.LockGone(name)},
		goneDue: layout.LockGoneDue(name)}
	if opts != nil {
		rl.opts = *opts
	}
	rl.err = rl.init(clients)
	return rl
}

// failoverServer is what Server names every failover (Sentinel) client
// by: go-redis's placeholder address, the same for all of them.
const failoverServer = "FailoverClient"

// init validates rl's input and sets up its masters.
func (rl *RedLock) init(clients []*relock.Client) error {
	if err := core.ValidateName(rl.name); err != nil {
		return fmt.Errorf("redlock: %w", err)
	}
	if err := rl.setOptions(); err != nil {
		return err
	}
	if len(clients) == 0 {
		return fmt.Errorf("redlock: no clients: %w", relock.ErrInvalidArgument)
	}
	seen := make(map[string]bool)
	for i, rc := range clients {
		c := core.Of(rc)
		if c == nil {
			return fmt.Errorf("redlock: client %d is nil: %w", i, relock.ErrInvalidArgument)
		}
		if server := c.Server(); server != failoverServer {
			if seen[server] {
				return fmt.Errorf("redlock: two clients of %s: %w", server, relock.ErrInvalidArgument)
			}
			seen[server] = true
		}
		rl.nodes = append(rl.nodes, c)
		if !rl.fixed && (rl.lease == 0 || c.WatchdogTimeout < rl.lease) {
			rl.lease = c.WatchdogTimeout
		}
	}
	rl.quorum = len(rl.nodes)/2 + 1
	if rl.opts.NodeTimeout >= rl.lease {
		return fmt.Errorf("redlock: NodeTimeout %v not below the lease %v: %w", rl.opts.NodeTimeout, rl.lease, relock.ErrInvalidArgument)
	}
	return nil
}

func (rl *RedLock) setOptions() error {
	o := &rl.opts
	if !core.ValidMillis(o.Lease) || o.NodeTimeout < 0 ||
		o.DriftFactor < 0 || o.DriftFactor >= 1 || o.RetryMin < 0 || o.RetryMax < 0 {
		return fmt.Errorf("redlock: bad options %+v: %w", *o, relock.ErrInvalidArgument)
	}
	rl.lease, rl.fixed = o.Lease, o.Lease > 0
	if o.NodeTimeout == 0 {
		o.NodeTimeout = DefaultNodeTimeout
	}
	if o.DriftFactor == 0 {
		o.DriftFactor = DefaultDriftFactor
	}
	if o.RetryMin == 0 {
		o.RetryMin = DefaultRetryMin
	}
	if o.RetryMax == 0 {
		o.RetryMax = max(DefaultRetryMax, o.RetryMin)
	}
	if o.RetryMax < o.RetryMin {
		return fmt.Errorf("redlock: RetryMax %v below RetryMin %v: %w", o.RetryMax, o.RetryMin, relock.ErrInvalidArgument)
	}
	return nil
}

// Name returns the lock's name, its key on every master.
func (rl *RedLock) Name() string {
	if rl == nil {
		return ""
	}
	return rl.name
}

// Quorum returns how many masters must hold the lock (0 for a RedLock
// made with bad input).
func (rl *RedLock) Quorum() int {
	if rl == nil {
		return 0
	}
	if rl.err != nil {
		return 0
	}
	return rl.quorum
}

// Lock tries until a quorum of masters holds the lock for ctx's owner (a
// new one if ctx carries none), or ctx ends (an error matching both
// relock.ErrNotAcquired and ctx.Err()), or any of the RedLock's clients
// closes (an error matching relock.ErrClosed, at once: Close does not
// wait for the wait). Whichever way it gives up, it has released what it
// took on every master. The returned context carries the
// owner; it is cancelled with cause relock.ErrLockLost once fewer than a
// quorum can hold the lock, carries the validity's end as its deadline
// with a fixed lease, and is cancelled by the Unlock that releases the
// last hold.
func (rl *RedLock) Lock(ctx context.Context) (context.Context, error) {
	if rl == nil {
		return nil, errNil
	}
	return rl.lock(ctx, -1)
}

// TryLock is Lock giving up after wait (0: one attempt) with an error
// matching relock.ErrNotAcquired.
func (rl *RedLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if rl == nil {
		return nil, errNil
	}
	if err := rl.usable(ctx); err != nil {
		return nil, err
	}
	if err := core.CheckWait("redlock", wait); err != nil {
		return nil, err
	}
	return rl.lock(ctx, wait)
}

func (rl *RedLock) lock(ctx context.Context, bound time.Duration) (lctx context.Context, err error) {
	if err := rl.usable(ctx); err != nil {
		return nil, err
	}
	ctx, owner := core.EnsureOwner(ctx)
	// The first client's Observer is told of the RedLock's acquires:
	// the rounds run under its context (octx), the lock context derives
	// from ctx.
	rounds := 0
	op := observe.OpLock
	if bound >= 0 {
		op = observe.OpTryLock
	}
	octx, observed := rl.nodes[0].StartAcquire(ctx, "redlock", op, rl.name)
	if observed != nil {
		defer func() { observed(err, rounds) }()
	}
	deadline := time.Now().Add(bound)
	var retry *time.Timer
	var cases []reflect.SelectCase // the wait's: retry timer, ctx, every client's hub
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("redlock: lock %q: %w: %w", rl.name, relock.ErrNotAcquired, err)
		}
		rounds++
		lctx, a, err := rl.round(octx, ctx, owner)
		switch {
		case err != nil:
			return nil, fmt.Errorf("redlock: lock %q: %w", rl.name, err)
		case lctx != nil:
			return lctx, nil
		}
		delay := rl.opts.RetryMin + rand.N(rl.opts.RetryMax-rl.opts.RetryMin+1)
		if bound >= 0 && time.Until(deadline) < delay {
			return nil, fmt.Errorf("redlock: lock %q: %w: %s", rl.name, relock.ErrNotAcquired, a)
		}
		if retry == nil {
			retry = time.NewTimer(delay)
			defer retry.Stop()
			cases = rl.waitCases(ctx, retry)
		} else {
			retry.Reset(delay)
		}
		// Nothing is held for the wait: a client closing ends it at
		// once, and the next round's Begin reports it.
		reflect.Select(cases)
	}
}

// waitCases are what a wait between attempts selects on: the retry
// timer, ctx, and the hub of every client, which Close closes.
func (rl *RedLock) waitCases(ctx context.Context, retry *time.Timer) []reflect.SelectCase {
	cases := make([]reflect.SelectCase, 0, 2+len(rl.nodes))
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(retry.C)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	for _, node := range rl.nodes {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(node.Hub().Done())})
	}
	return cases
}

// round is one attempt, taken as the lock or undone. It keeps every
// client open (Begin) only while it runs, which NodeTimeout bounds: a
// Close waits for a round, never for a wait between rounds. A client
// that closed fails the round with ErrClosed, after the attempt is undone
// on every master: nothing taken is left locked. It returns the lock
// context, derived from parent, or the failed attempt.
func (rl *RedLock) round(ctx, parent context.Context, owner int64) (context.Context, *attempt, error) {
	// Every client's pub/sub mode is known first (Check): a wait for
	// one keeps no other client's Close waiting.
	if err := rl.checkOpen(ctx); err != nil {
		return nil, nil, err
	}
	for _, n := range rl.nodes {
		end, err := n.Begin(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", n.Server(), err)
		}
		defer end()
	}
	a := rl.attempt(ctx, owner)
	var err error
	if a.ok() {
		err = rl.checkOpen(ctx)
		if err == nil {
			var lctx context.Context
			if lctx, err = rl.granted(parent, owner, a); err == nil {
				rl.buryUnanswered(ctx, owner, a)
				return lctx, a, nil
			}
		}
	}
	rl.undo(ctx, owner, a)
	if err == nil {
		err = rl.checkOpen(ctx)
	}
	return nil, a, err
}

// usable returns rl's input error, or core.Usable's: a RedLock that New
// did not make has no masters.
func (rl *RedLock) usable(ctx context.Context) error {
	if rl.err != nil {
		return rl.err
	}
	return core.Usable(rl.nodes != nil, ctx)
}

// checkOpen returns an error matching relock.ErrClosed once any client
// has closed, and waits for each client's pub/sub mode (core.Client.Check).
func (rl *RedLock) checkOpen(ctx context.Context) error {
	for _, n := range rl.nodes {
		if err := n.Check(ctx); err != nil {
			return fmt.Errorf("%s: %w", n.Server(), err)
		}
	}
	return nil
}

// An attempt is one round of acquires on every master.
type attempt struct {
	start    time.Time
	acquired []bool
	had      []bool // the owner held the master's record before
	errs     []error
	// numbers are each master's attempt number
	// (core.Client.BeginAttempt): an undo records it as given up before
	// it unlocks, so that an acquire that runs late changes nothing.
	numbers  []int64
	validity time.Duration
	quorum   int
}

func (a *attempt) count() int {
	n := 0
	for _, ok := range a.acquired {
		if ok {
			n++
		}
	}
	return n
}

func (a *attempt) ok() bool { return a.count() >= a.quorum && a.validity > 0 }

func (a *attempt) String() string {
	s := fmt.Sprintf("held by %d of %d masters (quorum %d), validity left %v", a.count(), len(a.acquired), a.quorum, a.validity)
	if err := errors.Join(a.errs...); err != nil {
		s += ": " + err.Error()
	}
	return s
}

// errReleasing is the error of an attempt on a master where the release
// of an earlier attempt of the owner's is still under way (detach).
var errReleasing = errors.New("the release of an earlier attempt is still under way")

// attempt sends the acquire to every master at once, each call cut off
// after NodeTimeout (relock's script clients honour deadlines), or when
// ctx ends: the undo then releases what may have landed. A re-entry (the
// owner held the master's record before) is not cut off by ctx, as the
// undo skips a re-entry that did not answer: it cannot tell an acquire
// that landed from one that did not, and must not release the holds the
// owner had. Where the release of an earlier attempt of the owner's is
// still sent again in the background (detach), which would release this
// one, the acquire waits for it within its NodeTimeout, or is not sent.
func (rl *RedLock) attempt(ctx context.Context, owner int64) *attempt {
	n := len(rl.nodes)
	a := &attempt{start: time.Now(), acquired: make([]bool, n), had: make([]bool, n), errs: make([]error, n),
		numbers: make([]int64, n), quorum: rl.quorum}
	var g errgroup.Group
	for i, node := range rl.nodes {
		field := node.Field(owner)
		key := core.HoldKey{Name: rl.name, Field: field}
		a.had[i] = node.Holding(key)
		g.Go(func() error {
			base := ctx
			if a.had[i] {
				base = context.WithoutCancel(ctx)
			}
			nctx, cancel := context.WithTimeout(base, rl.opts.NodeTimeout)
			defer cancel()
			at, err := node.BeginAttempt(nctx, key) // the hold protocol (core/protocol.go)
			if err != nil {
				a.errs[i] = fmt.Errorf("%s: %w", node.Server(), errReleasing)
				return nil
			}
			a.numbers[i] = at.Number
			reply, err := transport.EvalWithin(nctx, node.Scripts, lua.Acquire(), rl.acquireKeys, rl.leaseOf(node), field, "0", a.numbers[i])
			a.acquired[i] = err == nil && transport.OneReply(reply)
			if err != nil {
				a.errs[i] = fmt.Errorf("%s: %w", node.Server(), err)
			}
			return nil
		})
	}
	_ = g.Wait()
	drift := time.Duration(float64(rl.lease)*rl.opts.DriftFactor) + 2*time.Millisecond
	a.validity = rl.lease - time.Since(a.start) - drift
	return a
}

func (rl *RedLock) leaseOf(node *core.Client) int64 {
	if rl.fixed {
		return transport.Millis(rl.lease)
	}
	return transport.Millis(node.WatchdogTimeout)
}

// undo releases a failed attempt: on every master where the owner held
// nothing before (an acquire that timed out may still have landed), and
// where this attempt re-entered; not where the acquire was not sent (it
// could not connect, or the release of an earlier attempt was under
// way). Where the acquire did not answer, it may run after the unlock:
// the attempt is first recorded as given up (unlockNode). undo waits for
// the masters that answered the attempt; on those that did not, which
// may not answer the undo either, it runs in the background (detach).
// A release that gets no answer is sent again in the background, but a
// re-entry's: an unlock sent twice would release a hold the owner had.
func (rl *RedLock) undo(ctx context.Context, owner int64, a *attempt) {
	var g errgroup.Group
	for i, node := range rl.nodes {
		err := a.errs[i]
		if (a.had[i] && !a.acquired[i]) || transport.IsDialError(err) || errors.Is(err, errReleasing) {
			continue
		}
		var late int64
		if mayRunLate(err) {
			late = a.numbers[i]
		}
		release := func(ctx context.Context) error {
			_, err := rl.unlockNode(ctx, node, owner, late)
			return err
		}
		key := core.HoldKey{Name: rl.name, Field: node.Field(owner)}
		// A master that did not answer held nothing before: the owner's
		// re-entries that did not answer are skipped above.
		if transport.Unanswered(err) && rl.detach(ctx, node, key, release) {
			continue
		}
		g.Go(func() error {
			nctx, cancel := rl.nodeContext(ctx)
			err := release(nctx)
			cancel()
			if err != nil && !a.had[i] && transport.Transient(err) {
				rl.detach(ctx, node, key, release)
			}
			return nil
		})
	}
	_ = g.Wait()
}

// mayRunLate reports an error of an acquire that may still run on its
// master: its reply was lost (a deadline, a connection closed or reset
// after it was sent), not refused by Redis nor failed before it was sent.
func mayRunLate(err error) bool {
	return transport.Transient(err) && !transport.IsDialError(err)
}

// buryUnanswered records, in the background, the attempt a as given up
// on the masters that did not answer it although a quorum did: one that
// runs there late then changes nothing, where it would hold a record
// that the hold does not count, and that an Unlock sent before it could
// not release.
func (rl *RedLock) buryUnanswered(ctx context.Context, owner int64, a *attempt) {
	for i, node := range rl.nodes {
		if mayRunLate(a.errs[i]) {
			key := core.HoldKey{Name: rl.name, Field: node.Field(owner)}
			rl.detach(ctx, node, key, func(ctx context.Context) error { return rl.bury(ctx, node, owner, a.numbers[i]) })
		}
	}
}

// bury records owner's attempts on node's master up to number as given
// up, for a lease.
func (rl *RedLock) bury(ctx context.Context, node *core.Client, owner, number int64) error {
	return node.Bury(ctx, rl.acquireKeys[2], rl.goneDue, node.Field(owner), number, time.Duration(rl.leaseOf(node))*time.Millisecond)
}

// maxTryTimeout bounds each try of a release sent again in the
// background (detach), unless NodeTimeout is longer.
const maxTryTimeout = time.Second

// detach sends release, a clean-up on node's master for key that is safe
// to send twice, in the background until the master answers it
// (transport.Retry), for up to transport.OpTimeout: a reply lost once, or a master
// slower than NodeTimeout for a while, does not leave the clean-up
// undone. Its first try is cut off after NodeTimeout, and each next one
// after twice as long as the last, up to maxTryTimeout. It stops when the
// client begins to close: Close waits for the try in flight only, and
// what is left undone then ends with the lease. Until it is done, the
// owner's attempts on the master wait for it (attempt). It reports
// false, sending nothing, once the client is closing.
func (rl *RedLock) detach(ctx context.Context, node *core.Client, key core.HoldKey, release func(ctx context.Context) error) bool {
	closing := node.Hub().Done()
	return node.Detach(ctx, key, func(ctx context.Context) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		timeout := rl.opts.NodeTimeout
		_ = transport.Retry(ctx, func(ctx context.Context) error {
			tctx, tcancel := context.WithTimeout(ctx, timeout)
			defer tcancel()
			timeout = min(2*timeout, max(rl.opts.NodeTimeout, maxTryTimeout))
			return release(tctx)
		})
	})
}

// nodeContext returns the context of a call to a master, for ctx, that
// must run even when ctx is done (a release): ctx's values, cut off
// after NodeTimeout.
func (rl *RedLock) nodeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), rl.opts.NodeTimeout)
}

// unlockNode releases one hold of owner's on node's master within ctx,
// which the caller bounds (nodeContext, detach). It goes through the
// client relock runs acquires through, which neither retries nor
// outwaits its deadline, so that a dead master costs an Unlock or an
// undo no more than an attempt. late is the number of an attempt of the
// owner's whose reply the master lost, which may still run there (0:
// none): that attempt is first recorded as given up (core.Client.Bury),
// and the unlock is sent only once the record is made. The attempt then
// changes nothing if it runs after the unlock, and the unlock releases
// it if it ran before.
func (rl *RedLock) unlockNode(ctx context.Context, node *core.Client, owner, late int64) (any, error) {
	if late != 0 {
		if err := rl.bury(ctx, node, owner, late); err != nil {
			return nil, err
		}
	}
	return rl.unlockField(ctx, node, node.Field(owner), false)
}

// unlockField releases one hold of field on node's master or, with all,
// every hold it counts, through the no-retry client, within ctx.
func (rl *RedLock) unlockField(ctx context.Context, node *core.Client, field string, all bool) (any, error) {
	return transport.EvalWithin(ctx, node.Scripts, lua.Unlock(), rl.keys, rl.leaseOf(node), field, node.T.PublishArg(), transport.Flag(all))
}
