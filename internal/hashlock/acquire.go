package hashlock

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/internal/wait"
)

// Backoff bounds for Result.Turn.
const (
	minTurnBackoff = 10 * time.Millisecond
	maxTurnBackoff = 5 * time.Second
)

// Lock acquires for ctx's owner (a new one if ctx has none), waiting at
// most bound (0: one attempt; negative: until ctx ends).
func (l *Lock) Lock(ctx context.Context, bound time.Duration) (context.Context, error) {
	end, err := l.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	ctx = core.LockOwner(ctx)
	key, f, _ := l.owner(ctx)
	op := l.Op
	if bound >= 0 {
		op = l.TryOp
	}
	octx, done := l.C.StartAcquire(ctx, l.Kind, op, l.shown())
	a := &acquire{l: l, parent: ctx, key: key, f: f, bound: bound, backoff: minTurnBackoff}
	spec := wait.Spec{
		Hub: l.C.Hub(),
		// A lock's channels, its client's and Redisson's, wake as
		// Redisson's do: "0" wakes one waiter.
		Wake:       hub.WakeOne,
		AlsoWake:   hub.WakeOne,
		Acquirer:   a,
		LikelyFree: !l.taken.Load(),
		Wait:       bound,
		MaxSleep:   l.MaxSleep,
		Poll:       l.poll,
		Done:       done,
	}
	if _, ok := l.ops.(GiveUpper); ok {
		spec.Acquirer = quitting{a}
	}
	if l.channels != nil {
		spec.Channel, spec.Tag = l.channels.Channel(key.Field)
	}
	err = wait.Acquire(octx, spec)
	if taken := !a.asked.IsZero(); taken != !spec.LikelyFree {
		l.taken.Store(taken)
	}
	if err != nil {
		return nil, l.errorf("lock", err)
	}
	return a.lctx, nil
}

// TryLock is Lock for a lock type's TryLock, whose negative bound is bad
// input (core.CheckWait), found before anything else.
func (l *Lock) TryLock(ctx context.Context, bound time.Duration) (context.Context, error) {
	if err := core.CheckWait(l.Pkg, bound); err != nil {
		return nil, err
	}
	return l.Lock(ctx, bound)
}

// An acquire is the state of one Lock call.
type acquire struct {
	l     *Lock
	key   core.HoldKey
	f     Field
	bound time.Duration
	// parent is the caller's context, which the lock context derives
	// from; the attempts run under the Observer's (Lock's octx).
	parent context.Context

	queued  bool // an attempt queued the owner, which holds nothing here
	refused bool // an attempt was refused (Result.Refused)
	// last is the number of the last attempt sent, and cut tells that
	// the reply of one of them was lost: it may still run, late.
	last    int64
	cut     bool
	asked   time.Time     // send time of the last attempt that found the lock taken
	backoff time.Duration // the next sleep after a Result.Turn
	lctx    context.Context
}

// Attempt runs the acquire script once.
func (a *acquire) Attempt(ctx context.Context, listening bool) (wait.Outcome, error) {
	l := a.l
	try := a.bound == 0 || !listening
	mode := Join
	switch {
	case l.Grants && !l.C.Holding(a.key):
		// Where releases hand the lock over, a hold of an owner that
		// holds nothing on this client may be a grant to another of its
		// calls, not yet recorded, whatever this call is: counting a
		// re-entry on top would leave Redis one hold ahead once that
		// call records the grant too. It is taken as it is, and of two
		// calls taking one hold so, the second to record it re-enters
		// (take). A type without grants counts every hold it finds its
		// owner's.
		mode = Queued
		if try {
			mode = Claim
		}
	case try:
		mode = Try
	}
	at, err := l.C.BeginAttempt(ctx, a.key) // the hold protocol (core/protocol.go)
	if err != nil {
		return wait.Outcome{}, err
	}
	opctx, cancel := l.C.OpContext(ctx)
	defer cancel()
	a.last = at.Number
	r, err := l.ops.Acquire(opctx, a.f, mode, a.last)
	switch {
	case transport.NotSent(err):
		// It never reached Redis: nothing to undo.
		return wait.Outcome{}, err
	case err != nil:
		a.cut = true
		l.abandon(ctx, a.key, a.f, a.last)
		return wait.Outcome{}, err
	case r.Late:
		return a.Attempt(ctx, listening)
	case r.Refused != nil:
		a.refused = true
		return wait.Outcome{}, r.Refused
	case r.Acquired:
		o, err := a.take(ctx, core.Grant{Sent: at.Sent, Token: r.Token, Handoff: mode == Queued || mode == Claim})
		if err == nil && !o.Acquired {
			// Another call of the owner recorded the hold first: this
			// one re-enters it, at once, so that a single try does not
			// fail for a lock its owner holds.
			return a.Attempt(ctx, listening)
		}
		return o, err
	}
	a.queued = a.queued || mode == Join || mode == Queued
	a.asked = at.Sent
	o := wait.Outcome{TTL: r.Sleep}
	if f, ok := l.ops.(Foreigner); ok && r.Foreign {
		o.Also = f.Foreign(a.key.Field)
	}
	if r.Turn {
		o.TTL = a.backoff
		if r.Sleep >= 0 && r.Sleep < o.TTL {
			o.TTL = r.Sleep
		}
		a.backoff = min(2*a.backoff, maxTurnBackoff)
		return o, nil
	}
	a.backoff = minTurnBackoff
	return o, nil
}

// Handoff takes a lock the releaser's script handed to this waiter
// (fair_prelude.lua's hand_over, waiters_prelude.lua's hand_on), note
// being the lease in ms it set. The
// lease bound must rest on an instant that precedes the grant: the send
// time of the last attempt that found the lock taken, which the grant
// followed, as the waiter was queued by then. When that instant is too
// old for the renewals to come in time, or the grant's lease is not this
// lock's, the hold is renewed first and the bound rests on the renewal.
// It reports false, for an attempt to decide, when the grant is not
// there to take.
func (a *acquire) Handoff(ctx context.Context, note string) (bool, error) {
	l := a.l
	if !l.Grants {
		return false, nil
	}
	ms, err := strconv.ParseInt(note, 10, 64)
	if err != nil || ms <= 0 || !a.queued || l.C.Holding(a.key) {
		// "0": not a grant, only a wake-up.
		return false, nil
	}
	g := core.Grant{Sent: a.asked, Handoff: true}
	lease := time.Duration(l.LeaseMillis()) * time.Millisecond
	opctx, cancel := l.C.OpContext(ctx)
	defer cancel()
	syncs, err := l.C.T.Syncs(opctx, l.Name)
	if err != nil {
		return false, nil
	}
	if syncs || time.Duration(ms)*time.Millisecond != lease || time.Since(a.asked) > lease/3 {
		// With replica sync the grant, a write of the releaser's, is
		// confirmed by a write of this waiter's: the renewal, and the
		// WAIT behind it on the same connection, which counts every
		// write the master made before it.
		g.Sent = time.Now()
		n, err := l.C.T.EvalAcquire(opctx, transport.OneReply, lua.Renew(), l.renewKeys[:], l.leaseArg, a.f.Arg)
		if err != nil || n != int64(1) {
			return false, nil
		}
	}
	o, err := a.take(ctx, g)
	return o.Acquired, err
}

// A quitting acquire is one whose lock's Ops keep something in Redis
// for a waiter (GiveUpper): a wait.Quitter.
type quitting struct{ *acquire }

// GiveUp runs the Ops' GiveUp for a wait that ended without the lock,
// within core.Grace of the caller's end and then in the background
// (Settle). When the reply of one of its attempts was lost, the give-up
// first records its attempts as given up (Lock.bury): one that runs late
// then changes nothing, and one that ran before is undone by the
// give-up. An owner whose attempt was refused counts as holding the
// lock: a non-reentrant lock refuses an owner whose field is in the hash,
// and that hold (another call's of the same owner, perhaps a grant it is
// about to take) must not be passed on as one this wait left behind.
func (q quitting) GiveUp(ctx context.Context) error {
	a := q.acquire
	holding := a.refused || a.l.C.Holding(a.key)
	cut, last := a.cut, a.last
	return a.l.C.Settle(ctx, a.key, func(ctx context.Context) error {
		if cut {
			if err := a.l.bury(ctx, a.f, last); err != nil {
				return err
			}
		}
		return a.l.ops.(GiveUpper).GiveUp(ctx, a.f, holding)
	})
}

// take records an acquire. A hold Redis counts once (a grant, or one
// taken as it was: core.Grant.Handoff) that some other call of the owner
// recorded first leaves the outcome not acquired, for an attempt that
// re-enters.
func (a *acquire) take(ctx context.Context, g core.Grant) (wait.Outcome, error) {
	l := a.l
	g.Kind, g.Lease, g.Renewal, g.Releaser = l.Kind, l.Lease, l.renewal(a.f), l
	g.Shown = l.Display
	lctx, err := l.C.Take(a.parent, a.key, g, func() { l.abandon(ctx, a.key, a.f, a.last) })
	switch {
	case errors.Is(err, core.ErrHoldTaken):
		a.queued = false
		return wait.Outcome{}, nil
	case err != nil:
		return wait.Outcome{}, err
	}
	a.lctx = lctx
	return wait.Outcome{Acquired: true}, nil
}

func (l *Lock) renewal(f Field) renew.Renewal {
	if r, ok := l.ops.(Renewer); ok {
		return r.Renewal(f)
	}
	return l.HashRenewal(f)
}

// HashRenewal is the renewal of f's holds that Ops without a Renewer
// get: the hash's lease (the lock's own, if SetRenewed gave it one),
// while f's field exists.
func (l *Lock) HashRenewal(f Field) renew.Renewal {
	return HashRenewal(l.renewKeys[:], l.renewArg, f.Arg, l.renewed)
}

// HashRenewal is the renewal of field's holds on the lock hash keys[0]
// (keys has that one key): the hash's lease set to leaseMs while field
// exists in it. timeout is the lease renewed, 0 for the client's
// WatchdogTimeout.
func HashRenewal(keys []string, leaseMs, field any, timeout time.Duration) renew.Renewal {
	return renew.Renewal{Script: lua.Renew(), Keys: keys, Args: []any{leaseMs, field}, Timeout: timeout}
}

// abandon undoes an acquire whose reply was lost, or that succeeded as
// the client closed; attempt is its number, recorded as given up (bury)
// before the unlock is sent (core/late.go). For an owner that held no
// hold, the acquire either failed or left exactly one hold, which a
// single unlock removes; re-entries are left for the lease to end, as
// their count cannot be told apart from holds the owner still uses. The
// unlock goes through the acquires' client, which neither retries nor
// outwaits its deadline, bounded by Settle (an unlock sent twice is
// harmless here: the second finds no hold).
func (l *Lock) abandon(ctx context.Context, key core.HoldKey, f Field, attempt int64) {
	holding := l.C.Holding(key)
	undo := func(ctx context.Context) error {
		if err := l.bury(ctx, f, attempt); err != nil || holding {
			return err
		}
		_, err := l.ops.Unlock(ctx, l.C.Pipe, f, true)
		return err
	}
	if transport.Over(ctx) {
		// The caller is gone: none of its time is left to spend.
		l.C.Detach(ctx, key, func(ctx context.Context) { _ = transport.Retry(ctx, undo) })
		return
	}
	_ = l.C.Settle(ctx, key, undo)
}

// bury records f's attempts numbered up to last as given up, in the
// lock's Gone, for the lease a late attempt would set.
func (l *Lock) bury(ctx context.Context, f Field, last int64) error {
	d := time.Duration(l.LeaseMillis()) * time.Millisecond
	return l.C.Bury(ctx, l.Gone, l.GoneDue, f.Name, last, d)
}
