package election

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/fairlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// ErrNotLeader is returned by Proclaim and Resign when the Election does
// not lead: it never won, it resigned, or its leadership was lost.
var ErrNotLeader = errors.New("election: not the leader")

// ErrNoLeader is returned by Leader when the election has no leader.
var ErrNoLeader = errors.New("election: no leader")

// ErrCampaigning is returned by Campaign and TryCampaign on an Election
// that is campaigning or leading already: an Election campaigns for one
// leadership at a time. Make another Election for a second candidate.
var ErrCampaigning = errors.New("election: already campaigning or leading")

// Options configure an Election. A nil *Options means the defaults.
type Options struct {
	// WaitTimeout is how long a queued candidate may go without retrying
	// before others may drop it from the queue (its process is presumed
	// dead): the fair lock's fair.Options.WaitTimeout. Default
	// fair.DefaultWaitTimeout, five minutes.
	WaitTimeout time.Duration
	// WatchdogTimeout is the leader's lease in this election alone, as
	// etcd's concurrency.WithTTL sets it: a leader that stops renewing
	// (its process killed, its network cut) is replaced once it runs out.
	// The client's watchdog renews it every third of it, as it does a
	// lease of the client's relock.Options.WatchdogTimeout, which zero
	// means (30 s by default); otherwise at least
	// relock.MinWatchdogTimeout. A shorter lease fails over sooner, at
	// the cost of more renewals and of losing the leadership in a shorter
	// outage (docs/primitives.md).
	WatchdogTimeout time.Duration
}

// A Leader is an election's leader as Leader and Observe report it.
type Leader struct {
	Value string // what the leader proclaimed
	Term  int64  // its term: every leadership draws a greater one
}

// An Election is one candidate's handle on the election named name. It
// is safe for concurrent use, and campaigns for one leadership at a time.
// Create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Election struct {
	rc   *relock.Client
	c    *core.Client
	name string
	mu   fairlock.Mutex // the candidates' queue: Redisson's fair lock
	err  error          // bad input found by New, returned by every method
	// keys: the lock, the leader hash, the term counter, the channel,
	// the change log.
	keys []string

	lmu  sync.Mutex  // guards lead, busy
	lead *leadership // the current leadership, nil when not leading
	busy bool        // a Campaign is under way or leads
}

// errNil is the error of every operation of a nil *Election.
var errNil = core.NilReceiver("election", "Election")

// A leadership is one term of an Election.
type leadership struct {
	lock     context.Context         // the lock's context
	ctx      context.Context         // the leadership's: lock's values and term, cancelled after lock
	cancel   context.CancelCauseFunc // cancels ctx
	field    string                  // the lock field of its owner
	resigned atomic.Bool             // resign ran: the record and the lock are gone
}

// A leadCtx is a leadership's context: the lock context's values and
// deadline, but cancelled by the Election once it has forgotten the
// leadership (run), not by the lock context itself, so that when it is
// done this Election may campaign again at once.
type leadCtx struct {
	context.Context
	lock context.Context
}

func (c leadCtx) Deadline() (time.Time, bool) { return c.lock.Deadline() }

// termKey is the context key of a leadership's term.
type termKey struct{}

// New returns the Election named name on rc. Bad input (a nil client, an
// invalid name, a bad WaitTimeout or WatchdogTimeout) is not reported
// here but by every method of the returned Election.
func New(rc *relock.Client, name string, opts *Options) *Election {
	var o Options
	if opts != nil {
		o = *opts
	}
	e := &Election{rc: rc, c: core.Of(rc), name: name}
	switch {
	case e.c == nil:
		e.err = fmt.Errorf("election: nil client: %w", relock.ErrInvalidArgument)
	case o.WaitTimeout < 0:
		e.err = fmt.Errorf("election: wait timeout %v: %w", o.WaitTimeout, relock.ErrInvalidArgument)
	case o.WatchdogTimeout < 0 || (o.WatchdogTimeout > 0 && o.WatchdogTimeout < relock.MinWatchdogTimeout):
		e.err = fmt.Errorf("election: WatchdogTimeout %v not 0 or at least %v: %w", o.WatchdogTimeout, relock.MinWatchdogTimeout, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			e.err = fmt.Errorf("election: %w", err)
		}
	}
	lock := layout.ElectionLock(name)
	e.mu.Init(rc, lock, 0, o.WaitTimeout)
	if o.WatchdogTimeout > 0 {
		e.mu.SetRenewed(o.WatchdogTimeout)
	}
	e.mu.ObserveAs("election", observe.OpCampaign, observe.OpTryCampaign)
	e.keys = []string{
		lock,
		layout.ElectionLeader(name),
		layout.ElectionTerm(name),
		layout.ElectionChannel(name),
		layout.ElectionLog(name),
	}
	return e
}

// Name returns the election's name.
func (e *Election) Name() string {
	if e == nil {
		return ""
	}
	return e.name
}

// Campaign waits, in arrival order among the candidates, until this
// candidate is elected, then proclaims value and returns the leadership
// context: it carries the term (TermOf) and is cancelled when the
// leadership ends, with cause relock.ErrLockLost when the lease was lost
// (before another candidate can be elected) and relock.ErrClosed when the
// Client closed. Work done as the leader should watch it, and writes to
// other systems should carry the term (see the package doc).
//
// ctx bounds the campaign and the leadership: when it ends while the
// candidate waits, Campaign returns an error matching
// relock.ErrNotAcquired; when it ends while the candidate leads, the
// candidate resigns. An Election campaigns for one leadership at a time:
// a second Campaign while one waits or leads returns an error matching
// ErrCampaigning.
func (e *Election) Campaign(ctx context.Context, value string) (context.Context, error) {
	if e == nil {
		return nil, errNil
	}
	return e.run(ctx, value, -1)
}

// TryCampaign is Campaign giving up after wait (0: elected only when
// nobody leads or waits) with an error matching relock.ErrNotAcquired.
func (e *Election) TryCampaign(ctx context.Context, value string, wait time.Duration) (context.Context, error) {
	if e == nil {
		return nil, errNil
	}
	if err := core.CheckWait("election", wait); err != nil {
		return nil, err
	}
	return e.run(ctx, value, wait)
}

// run is Campaign waiting at most wait (negative: until ctx ends).
func (e *Election) run(ctx context.Context, value string, wait time.Duration) (context.Context, error) {
	if err := e.usable(ctx); err != nil {
		return nil, err
	}
	e.lmu.Lock()
	if e.busy {
		e.lmu.Unlock()
		return nil, fmt.Errorf("election: campaign %q: %w", e.name, ErrCampaigning)
	}
	e.busy = true
	e.lmu.Unlock()
	lead, err := e.campaign(ctx, value, wait)
	e.lmu.Lock()
	defer e.lmu.Unlock()
	if err != nil {
		e.busy = false
		return nil, err
	}
	e.lead = lead
	// However the leadership ends (lost, closed, resigned, or ctx ended,
	// which cancels the lock's context but leaves the lock held), the
	// record and the lock must go: off the caller's goroutine, owned by
	// the Client (whose Shutdown releases the lock itself).
	context.AfterFunc(lead.lock, func() {
		e.ended(lead)
		lead.cancel(context.Cause(lead.lock))
		if !lead.resigned.Load() {
			e.c.Background(func() {
				// On a context the Client's Shutdown ends when it stops
				// waiting: go-redis waits out its retries' backoff on it.
				bctx, cancel := e.c.BackgroundContext(lead.ctx)
				defer cancel()
				_ = e.resign(bctx, lead)
			})
		}
	})
	return lead.ctx, nil
}

// campaign takes the lock for a fresh owner and records the leadership.
func (e *Election) campaign(ctx context.Context, value string, wait time.Duration) (*leadership, error) {
	var lctx context.Context
	var err error
	if ctx = relock.WithNewOwner(ctx); wait < 0 {
		lctx, err = e.mu.Lock(ctx)
	} else {
		lctx, err = e.mu.TryLock(ctx, wait)
	}
	if err != nil {
		return nil, fmt.Errorf("election: campaign %q: %w", e.name, err)
	}
	owner, _ := core.OwnerFrom(lctx)
	field := e.c.Field(owner)
	opctx, cancel := e.c.OpContext(lctx)
	defer cancel()
	reply, err := transport.Eval(opctx, e.c.Redis, lua.ElectionElect(), e.keys, field, value, e.c.T.PublishArg())
	term, ok := reply.(int64)
	if err != nil || !ok {
		uerr := e.mu.Unlock(lctx)
		if err != nil && uerr == nil {
			// The record's reply was lost: it may have run, or may run
			// late. Once the lock is released a late one changes
			// nothing (it needs the lock), so the record, if it ran, is
			// removed now, in the background when the caller is gone.
			e.unrecord(ctx, field)
		}
		if err == nil {
			err = relock.ErrLockLost
		}
		return nil, fmt.Errorf("election: campaign %q: recording the leader: %w", e.name, transport.Ended(ctx, relock.ErrNotAcquired, err))
	}
	inner, end := context.WithCancelCause(context.WithValue(context.WithoutCancel(lctx), termKey{}, term))
	return &leadership{lock: lctx, ctx: leadCtx{Context: inner, lock: lctx}, cancel: end, field: field}, nil
}

// unrecord removes the leader record of field, a candidate that is not
// leading, if it is there: within core.Grace of ctx's end, then in the
// background (core.Client.Settle).
func (e *Election) unrecord(ctx context.Context, field string) {
	_ = e.c.Settle(ctx, core.HoldKey{Name: e.keys[0], Field: field}, func(ctx context.Context) error {
		_, err := transport.Eval(ctx, e.c.Redis, lua.ElectionResign(), []string{e.keys[1], e.keys[3]}, field, e.c.T.PublishArg())
		return err
	})
}

// TermOf returns the term of the leadership whose context (as Campaign
// returned it, or derived from it) is ctx; false for any other context,
// nil (what a failed Campaign returns) included.
func TermOf(ctx context.Context) (int64, bool) {
	if ctx == nil {
		return 0, false
	}
	term, ok := ctx.Value(termKey{}).(int64)
	return term, ok
}

// current returns the Election's leadership, or ErrNotLeader, for an
// operation given ctx.
func (e *Election) current(ctx context.Context) (*leadership, error) {
	if err := e.usable(ctx); err != nil {
		return nil, err
	}
	e.lmu.Lock()
	defer e.lmu.Unlock()
	if e.lead == nil || e.lead.lock.Err() != nil {
		return nil, fmt.Errorf("election: %q: %w", e.name, ErrNotLeader)
	}
	return e.lead, nil
}

// Proclaim changes the leader's value, keeping its term, and tells the
// observers. It returns an error matching ErrNotLeader when this
// Election does not lead.
func (e *Election) Proclaim(ctx context.Context, value string) error {
	if e == nil {
		return errNil
	}
	lead, err := e.current(ctx)
	if err != nil {
		return err
	}
	opctx, cancel := e.c.OpContext(ctx)
	defer cancel()
	n, err := transport.Eval(opctx, e.c.Redis, lua.ElectionProclaim(), []string{e.keys[0], e.keys[1], e.keys[3], e.keys[4]}, lead.field, value, e.c.T.PublishArg())
	switch {
	case err != nil:
		return fmt.Errorf("election: proclaim %q: %w", e.name, err)
	case n != int64(1):
		return fmt.Errorf("election: proclaim %q: %w", e.name, ErrNotLeader)
	}
	return nil
}

// Resign ends this Election's leadership: the leader record goes, the
// observers are told, and the lock passes to the next candidate in line,
// which is elected at once. The leadership context is cancelled. It
// returns an error matching ErrNotLeader when this Election does not
// lead.
func (e *Election) Resign(ctx context.Context) error {
	if e == nil {
		return errNil
	}
	lead, err := e.current(ctx)
	if err != nil {
		return err
	}
	return e.resign(ctx, lead)
}

func (e *Election) resign(ctx context.Context, lead *leadership) error {
	lead.resigned.Store(true)
	opctx, cancel := e.c.OpContext(ctx)
	defer cancel()
	_, err := transport.Eval(opctx, e.c.Redis, lua.ElectionResign(), []string{e.keys[1], e.keys[3]}, lead.field, e.c.T.PublishArg())
	// The lock's owner is the leadership's; the time is the caller's.
	uctx := lead.ctx
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		uctx, cancel = context.WithDeadline(uctx, d)
		defer cancel()
	}
	if uerr := e.mu.Unlock(uctx); uerr != nil && !errors.Is(uerr, relock.ErrNotHeld) {
		err = errors.Join(err, uerr)
	}
	// Forgotten first, then cancelled: a Campaign made as soon as the
	// leadership's context is done is not refused.
	e.ended(lead)
	cause := context.Cause(lead.lock)
	if cause == nil {
		cause = relock.ErrUnlocked
	}
	lead.cancel(cause)
	if err != nil {
		return fmt.Errorf("election: resign %q: %w", e.name, err)
	}
	return nil
}

// ended forgets lead, if it is the Election's leadership, so that the
// Election may campaign again.
func (e *Election) ended(lead *leadership) {
	e.lmu.Lock()
	defer e.lmu.Unlock()
	if e.lead == lead {
		e.lead, e.busy = nil, false
	}
}

// Leader returns the election's leader: the value it proclaimed last and
// its term. It returns an error matching ErrNoLeader when there is none
// (none was elected, the last one resigned, or its lease ran out and no
// successor is elected yet).
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	if e == nil {
		return Leader{}, errNil
	}
	if err := e.check(ctx); err != nil {
		return Leader{}, err
	}
	l, ok, err := e.read(ctx)
	switch {
	case err != nil:
		return Leader{}, fmt.Errorf("election: leader of %q: %w", e.name, err)
	case !ok:
		return Leader{}, fmt.Errorf("election: %q: %w", e.name, ErrNoLeader)
	}
	return l, nil
}

// check returns the Election's input error or relock.ErrClosed.
func (e *Election) check(ctx context.Context) error {
	if e.err != nil {
		return e.err
	}
	return e.c.Check(ctx)
}

// usable returns the Election's input error, or core.Usable's for an
// Election that New did not make or a nil ctx.
func (e *Election) usable(ctx context.Context) error {
	if e.err != nil {
		return e.err
	}
	return core.Usable(e.c != nil, ctx)
}

// read reads the leader in one script call.
func (e *Election) read(ctx context.Context) (Leader, bool, error) {
	opctx, cancel := e.c.OpContext(ctx)
	defer cancel()
	reply, err := transport.Eval(opctx, e.c.Redis, lua.ElectionLeader(), e.keys[:2])
	if err != nil || reply == nil {
		return Leader{}, false, err
	}
	pair, ok := reply.([]any)
	if !ok || len(pair) != 2 {
		return Leader{}, false, fmt.Errorf("unexpected leader reply %v", reply)
	}
	l, err := leaderOf(pair[0], pair[1])
	return l, err == nil, err
}

// leaderOf makes a Leader of a script's value and term replies.
func leaderOf(value, term any) (Leader, error) {
	v, _ := value.(string)
	ts, _ := term.(string)
	n, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return Leader{}, fmt.Errorf("unexpected leader term %v", term)
	}
	return Leader{Value: v, Term: n}, nil
}
