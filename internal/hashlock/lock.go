// Package hashlock is the machinery shared by the lock types whose record
// is Redisson's lock hash (a field "<client id>:<owner>" counting holds,
// the hash's TTL as the lease): the reentrant, fair, non-reentrant and
// spin locks. A lock package supplies its scripts as Ops; hashlock runs
// the acquire loop, keeps the local hold records, and answers the state
// queries.
package hashlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/observe"
	"github.com/relock-go/relock/scripts"
	"github.com/relock-go/relock/watchdog"
)

// A Result is the outcome of one acquire attempt.
type Result struct {
	Acquired bool
	Token    int64 // fencing token of the acquire, 0 if none

	// Sleep bounds the wait before the next attempt: the lock's TTL, or
	// negative when it has none (wait for a wake-up).
	Sleep time.Duration
	// Turn reports that the lock is free but another waiter goes first
	// (a fair lock's queue head). The next attempts back off
	// exponentially, bounded by Sleep, until that waiter has taken it.
	Turn bool
	// Refused, when set, ends the wait with this error: the acquire can
	// never succeed (a read-to-write upgrade, a non-reentrant lock's
	// owner asking again).
	Refused error
	// Foreign reports that a holder or waiter ahead of the caller is not
	// a relock client: it wakes the caller on Foreigner's channel.
	Foreign bool
	// Late reports that the attempt changed nothing because a give-up
	// of the owner's was recorded with a number at least the attempt's
	// (core.Client.Bury): another call of the same owner gave up an
	// attempt sent after this one. The caller tries again at once, with
	// a new number.
	Late bool
}

// LateReply is what every acquire script replies to a late attempt.
const LateReply = int64(0)

// PTTL reads the {pttl} that an acquire script of a lock type without
// waiters of its own (spin, read/write) replies when the lock is taken:
// the lock's PTTL in ms, which bounds the wait for it (-1: no expiry).
// It reads LateReply too.
func PTTL(reply any) (Result, error) {
	if reply == LateReply {
		return Result{Late: true}, nil
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 1 {
		return Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	ttl, _ := r[0].(int64)
	return Result{Sleep: time.Duration(ttl) * time.Millisecond}, nil
}

// A Mode tells an acquire script what the caller wants of it.
type Mode string

// The modes, as the scripts take them (fair_acquire.lua's ARGV[4]).
const (
	// Try takes the lock if that can be done at once, and leaves
	// nothing behind.
	Try Mode = "0"
	// Join takes or re-enters the lock, or queues for it.
	Join Mode = "1"
	// Queued is Join for an owner that holds nothing on its client: a
	// hold of its in Redis was handed to one of its calls (a grant not
	// yet recorded), and counts as it is.
	Queued Mode = "2"
	// Claim is Try for an owner that holds nothing on its client,
	// taking a hold of its in Redis as Queued does.
	Claim Mode = "3"
)

// Arg is m as a script argument, boxed without allocating.
func (m Mode) Arg() any {
	switch m {
	case Try:
		return string(Try)
	case Queued:
		return string(Queued)
	case Claim:
		return string(Claim)
	}
	return string(Join)
}

// Ops are the scripts of one lock type, each run once per call. A lock type
// implements them on its own lock value, converted to a type that keeps
// them out of its API: a lock then costs no closure per operation. The
// optional ones below are found by type assertion.
type Ops interface {
	// Acquire tries once for f, as mode asks. attempt is the attempt's
	// number (core.Client.NextAttempt), to send with Lock.Gone: the
	// acquire script changes nothing, and replies LateReply, when a
	// give-up recorded a number at least attempt's.
	Acquire(ctx context.Context, f Field, mode Mode, attempt int64) (Result, error)
	// Unlock releases one hold of f through rdb: reply nil when it
	// holds none, 0 when holds remain, 1 when the lock was released.
	// last tells that the owner knows of one hold only: the script may
	// remove the field without reading its count.
	Unlock(ctx context.Context, rdb redis.Scripter, f Field, last bool) (any, error)
}

// Optional Ops.
type (
	// A GiveUpper undoes what failed attempts left in Redis, if
	// anything (a fair lock's queue entry, or a grant not taken);
	// holding tells whether the owner holds the lock on this client.
	// Ops without it leave nothing behind a failed attempt.
	GiveUpper interface {
		GiveUp(ctx context.Context, f Field, holding bool) error
	}
	// A Forcer deletes the lock and replies the holders it deleted, as
	// core.Forced reads it: Lock.ForceUnlock needs it.
	Forcer interface {
		ForceUnlock(ctx context.Context) (any, error)
	}
	// A Channeler names the channel on which field's waits are woken,
	// and the waiter's tag there ("" for none): a message
	// "<tag>:<lease ms>" hands it the lock (a fair lock's grant). A lock
	// that listens needs it; one that polls (Lock.Poll) does not.
	Channeler interface {
		Channel(field string) (channel, tag string)
	}
	// A Foreigner names the channel on which clients other than relock
	// wake field's waits, when Result.Foreign says one may.
	Foreigner interface {
		Foreign(field string) string
	}
	// A Renewer makes the watchdog's renewal of field's holds. Ops
	// without it renew the hash while field exists.
	Renewer interface {
		Renewal(f Field) watchdog.Renewal
	}
)

// Tag is a waiter's tag on its client's channel: the owner number that
// ends field, "<client id>:<owner>".
func Tag(field string) string {
	return field[strings.LastIndexByte(field, ':')+1:]
}

// A Field is an owner's hash field (Lock.Field applied) and the same value
// boxed as a script argument: core.Client.FieldFrom boxes an owner's field
// once, so that a Lock and its Unlock need not box it for every call.
type Field struct {
	S   string
	Arg any
}

// Backoff bounds for Result.Turn.
const (
	minTurnBackoff = 10 * time.Millisecond
	maxTurnBackoff = 5 * time.Second
)

// A Lock is one lock of a hash-record type. A lock type keeps it in its
// own value (Init), so that making a lock is one allocation.
type Lock struct {
	C      *core.Client
	Client *relock.Client // the user's handle on C
	Name   string
	Pkg    string        // error prefix: the lock package's name
	Lease  time.Duration // fixed lease; 0 means the watchdog renews
	Ops    Ops
	// Kind names the lock to the Observer, and Op and TryOp its Lock
	// calls that wait until ctx ends and those bounded: Init sets Pkg,
	// observe.OpLock and OpTryLock, and an election's lock is told as
	// "election", with Campaign and TryCampaign.
	Kind      string
	Op, TryOp observe.Op
	// Grants tells that a release may hand the lock to the waiter it
	// wakes: a tagged wake-up "<tag>:<lease ms>" then means "you hold
	// it", and "<tag>:0" only "try". Without it, a tagged wake-up only
	// tells the waiter to try.
	Grants bool
	// Field maps an owner's "<client id>:<owner>" to the hash field of
	// its holds (a writer's ":write" suffix); nil keeps it.
	Field func(owner string) string
	// MaxSleep caps each sleep between attempts (a fair waiter's score
	// refresh); 0 means no cap.
	MaxSleep time.Duration
	// Poll, when set, makes waits poll with this backoff instead of
	// listening (Redisson's spin lock, whose releases publish nothing):
	// they never subscribe, and Channeler, Foreigner and Grants go
	// unused.
	Poll wait.Backoff
	Err  error // bad input found by Init, returned by every method

	// Gone is relock's record of the lock's given-up attempts
	// (layout.LockGone): the acquire scripts' last KEY.
	Gone string
	// GoneFor is how long a record of given-up attempts lasts at
	// least: longer than the lease a late attempt would set
	// (LeaseMillis, the default) for a lock whose waiters stay queued
	// longer than that (a fair lock's wait timeout).
	GoneFor time.Duration

	// renewed is the lease the watchdog renews when Lease is 0, if the
	// lock has one of its own (SetRenewed); 0 for the client's
	// WatchdogTimeout.
	renewed time.Duration

	// Arguments made once, so that each call boxes no new value.
	leaseArg  any       // LeaseMillis
	renewArg  any       // the renewed lease in ms
	renewKeys [1]string // the default renewal's KEYS: Name

	// taken: the last Lock call through this value found the lock
	// taken, so the next one looks for a live channel to join before
	// its first attempt (wait.Spec.LikelyFree). A hint that costs
	// nothing but, when wrong, a hub lookup or a second attempt; any
	// number of calls read and write it at once.
	taken atomic.Bool
}

// Init validates a lock's inputs and sets l up without Ops; the caller
// fills them in. Bad input is recorded in Err, not returned.
func (l *Lock) Init(pkg string, rc *relock.Client, name string, lease time.Duration) {
	*l = Lock{C: core.Of(rc), Client: rc, Name: name, Pkg: pkg, Kind: pkg, Op: observe.OpLock, TryOp: observe.OpTryLock,
		Lease: lease, renewKeys: [1]string{name}, Gone: layout.LockGone(name)}
	switch {
	case l.C == nil:
		l.Err = fmt.Errorf("%s: nil client: %w", pkg, relock.ErrInvalidArgument)
	case lease < 0 || (lease > 0 && lease < time.Millisecond):
		l.Err = fmt.Errorf("%s: lease %v: %w", pkg, lease, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			l.Err = fmt.Errorf("%s: %w", pkg, err)
		}
	}
	switch {
	case l.C == nil:
	case lease > 0:
		l.leaseArg, l.renewArg = core.Millis(lease), l.C.WatchdogArg
	default:
		l.leaseArg, l.renewArg = l.C.WatchdogArg, l.C.WatchdogArg
	}
}

// SetRenewed gives a lock without a fixed Lease a renewed lease of its
// own, d in whole ms, in place of the client's WatchdogTimeout: its
// acquires set it, and the client's watchdog renews it every d/3 and
// reports it lost in proportion (watchdog.Renewal.Timeout). The caller
// has checked d (at least relock.MinWatchdogTimeout). Call it after Init.
func (l *Lock) SetRenewed(d time.Duration) {
	if l.C == nil || l.Lease > 0 {
		return
	}
	l.renewed = d.Truncate(time.Millisecond)
	l.leaseArg = core.Millis(l.renewed)
	l.renewArg = l.leaseArg
}

// Check returns the lock's input error, or core.Client.Check's.
func (l *Lock) Check(ctx context.Context) error {
	if l.Err != nil {
		return l.Err
	}
	return l.C.Check(ctx)
}

// Begin is Check for an operation that runs scripts (see
// core.Client.Begin).
func (l *Lock) Begin(ctx context.Context) (end func(), err error) {
	if l.Err != nil {
		return nil, l.Err
	}
	return l.C.Begin(ctx)
}

// LeaseArg is LeaseMillis as a script argument.
func (l *Lock) LeaseArg() any { return l.leaseArg }

// LeaseMillis is the lease every acquire and unlock sets, in ms.
func (l *Lock) LeaseMillis() int64 {
	switch {
	case l.Lease > 0:
		return core.Millis(l.Lease)
	case l.renewed > 0:
		return core.Millis(l.renewed)
	}
	return core.Millis(l.C.WatchdogTimeout)
}

// Key is the hold record of ctx's owner, if ctx carries one.
func (l *Lock) Key(ctx context.Context) (core.HoldKey, bool) {
	key, _, ok := l.owner(ctx)
	return key, ok
}

// owner is Key and the owner's Field.
func (l *Lock) owner(ctx context.Context) (core.HoldKey, Field, bool) {
	field, arg, ok := l.C.FieldFrom(ctx)
	if !ok {
		return core.HoldKey{}, Field{}, false
	}
	if l.Field != nil {
		field = l.Field(field)
		arg = field
	}
	return core.HoldKey{Name: l.Name, Field: field}, Field{S: field, Arg: arg}, true
}

func (l *Lock) errorf(op string, err error) error {
	return fmt.Errorf("%s: %s %q: %w", l.Pkg, op, l.Name, err)
}

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
	octx, done := l.C.StartAcquire(ctx, l.Kind, op, l.Name)
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
		Poll:       l.Poll,
		Done:       done,
	}
	if _, ok := l.Ops.(GiveUpper); ok {
		spec.Acquirer = quitting{a}
	}
	if l.Poll == nil {
		spec.Channel, spec.Tag = l.Ops.(Channeler).Channel(key.Field)
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
	// A clean-up of this owner's acquire or unlock that goes on in the
	// background (an undo of an attempt whose reply was lost) must not
	// undo this attempt's hold.
	if err := l.C.AwaitPending(ctx, a.key); err != nil {
		return wait.Outcome{}, err
	}
	opctx, cancel := l.C.OpContext(ctx)
	defer cancel()
	sent := time.Now()
	a.last = l.C.NextAttempt()
	r, err := l.Ops.Acquire(opctx, a.f, mode, a.last)
	switch {
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
		o, err := a.take(ctx, core.Grant{Sent: sent, Token: r.Token, Handoff: mode == Queued || mode == Claim})
		if err == nil && !o.Acquired {
			// Another call of the owner recorded the hold first: this
			// one re-enters it, at once, so that a single try does not
			// fail for a lock its owner holds.
			return a.Attempt(ctx, listening)
		}
		return o, err
	}
	a.queued = a.queued || mode == Join || mode == Queued
	a.asked = sent
	o := wait.Outcome{TTL: r.Sleep}
	if f, ok := l.Ops.(Foreigner); ok && r.Foreign {
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
	syncs, err := l.C.Syncs(opctx, l.Name)
	if err != nil {
		return false, nil
	}
	if syncs || time.Duration(ms)*time.Millisecond != lease || time.Since(a.asked) > lease/3 {
		// With replica sync the grant, a write of the releaser's, is
		// confirmed by a write of this waiter's: the renewal, and the
		// WAIT behind it on the same connection, which counts every
		// write the master made before it.
		g.Sent = time.Now()
		n, err := l.C.EvalAcquire(opctx, core.OneReply, scripts.Renew(), l.renewKeys[:], l.leaseArg, a.f.Arg)
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
		return a.l.Ops.(GiveUpper).GiveUp(ctx, a.f, holding)
	})
}

// take records an acquire. A hold Redis counts once (a grant, or one
// taken as it was: core.Grant.Handoff) that some other call of the owner
// recorded first leaves the outcome not acquired, for an attempt that
// re-enters.
func (a *acquire) take(ctx context.Context, g core.Grant) (wait.Outcome, error) {
	l := a.l
	g.Kind, g.Lease, g.Renewal, g.Releaser = l.Kind, l.Lease, l.renewal(a.f), l
	lctx, err := l.C.Granted(a.parent, a.key, g)
	switch {
	case errors.Is(err, core.ErrHoldTaken):
		a.queued = false
		return wait.Outcome{}, nil
	case err != nil:
		l.abandon(ctx, a.key, a.f, a.last)
		return wait.Outcome{}, err
	}
	a.lctx = lctx
	// The client hears of a ForceUnlock elsewhere from its first hold on.
	l.C.Listen()
	return wait.Outcome{Acquired: true}, nil
}

func (l *Lock) renewal(f Field) watchdog.Renewal {
	if r, ok := l.Ops.(Renewer); ok {
		return r.Renewal(f)
	}
	return l.HashRenewal(f)
}

// HashRenewal is the renewal of f's holds that Ops without a Renewer
// get: the hash's lease (the lock's own, if SetRenewed gave it one),
// while f's field exists.
func (l *Lock) HashRenewal(f Field) watchdog.Renewal {
	return watchdog.Renewal{
		Script:  scripts.Renew(),
		Keys:    l.renewKeys[:],
		Args:    []any{l.renewArg, f.Arg},
		Timeout: l.renewed,
	}
}

// abandon undoes an acquire whose reply was lost, or that succeeded as
// the client closed; attempt is its number. The attempt is first
// recorded as given up (bury), so that it changes nothing if it runs
// after that; one that ran before is undone by an unlock sent once the
// record is made. For an owner that held no hold, the acquire either
// failed or left exactly one hold, which a single unlock removes;
// re-entries are left for the lease to end, as their count cannot be told
// apart from holds the owner still uses. The unlock goes through the
// acquires' client, which neither retries nor outwaits its deadline; it
// gets core.Grace past the caller's end and then goes on in the
// background (Settle), which the owner's next acquire waits for (an
// unlock sent twice is harmless here: the second finds no hold).
func (l *Lock) abandon(ctx context.Context, key core.HoldKey, f Field, attempt int64) {
	holding := l.C.Holding(key)
	undo := func(ctx context.Context) error {
		if err := l.bury(ctx, f, attempt); err != nil || holding {
			return err
		}
		_, err := l.Ops.Unlock(ctx, l.C.Scripts, f, true)
		return err
	}
	if core.Over(ctx) {
		// The caller is gone: none of its time is left to spend.
		l.C.Detach(ctx, key, func(ctx context.Context) { _ = core.Retry(ctx, undo) })
		return
	}
	_ = l.C.Settle(ctx, key, undo)
}

// bury records f's attempts numbered up to last as given up, in the
// lock's Gone, for GoneFor (or the lease).
func (l *Lock) bury(ctx context.Context, f Field, last int64) error {
	d := max(l.GoneFor, time.Duration(l.LeaseMillis())*time.Millisecond)
	return l.C.Bury(ctx, l.Gone, f.S, last, d)
}

// Release releases holds of field in Redis, holds times, through the scripts
// client, until ctx ends: what Client.Shutdown does with a hold of this
// lock.
func (l *Lock) Release(ctx context.Context, field string, holds int) error {
	f := Field{S: field, Arg: field}
	for range holds {
		reply, err := l.Ops.Unlock(ctx, l.C.Scripts, f, true)
		if n, _ := reply.(int64); err != nil || reply == nil || n == 1 {
			// An error, nothing (more) held, or the lock released.
			return err
		}
	}
	return nil
}

// Unlock releases one hold of ctx's owner.
func (l *Lock) Unlock(ctx context.Context) (err error) {
	end, err := l.Begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	octx, observed := l.C.StartUnlock(ctx, l.Kind, observe.OpUnlock, l.Name)
	if observed != nil {
		defer func() { observed(err) }()
	}
	key, f, ok := l.owner(ctx)
	if !ok {
		return l.errorf("unlock", relock.ErrNoOwner)
	}
	// The unlock runs by ctx's deadline, or within core.Grace when ctx
	// is done already (a lock context whose parent ended).
	u := l.C.BeginUnlock(key)
	defer l.C.EndUnlock(u)
	holds := u.Holds()
	cctx, cancel := l.C.CleanupContext(octx)
	// Through the acquires' client: its connections are the ones the
	// owner's Lock used, so an Unlock given only core.Grace (its context
	// done) rarely waits for a dial and a TLS handshake, and a reply it
	// loses is handled here rather than resent by go-redis.
	reply, err := l.Ops.Unlock(cctx, l.C.Scripts, f, holds == 1)
	cancel()
	if err != nil {
		// Read ctx's end first: ending the hold below cancels ctx when
		// it is one of the hold's own contexts.
		ended := core.Ended(ctx, nil, err)
		l.C.UnlockFailed(key, err)
		// The owner's last hold, or a hold Redis may still have for an
		// owner that holds none here (lost to a partition, say), is
		// released in the background once Redis answers: an unlock sent
		// twice finds nothing the second time, and the owner's next Lock
		// waits for it.
		again := holds <= 1 && core.Transient(err) && l.C.Detach(ctx, key, func(ctx context.Context) {
			_ = core.Retry(ctx, func(ctx context.Context) error {
				_, err := l.Ops.Unlock(ctx, l.C.Scripts, f, true)
				return err
			})
		})
		switch {
		case holds == 0 && core.Transient(err):
			// The answer is known here: this owner holds nothing.
			return l.errorf("unlock", fmt.Errorf("%w (Redis did not answer: %w)", relock.ErrNotHeld, err))
		case again:
			ended = fmt.Errorf("%w (sent again in the background, for up to %v; the lease bounds what it cannot do)", ended, core.OpTimeout)
		}
		return l.errorf("unlock", ended)
	}
	if reply == nil {
		l.C.Lost(l.Name, key.Field)
		return l.errorf("unlock", relock.ErrNotHeld)
	}
	n, ok := reply.(int64)
	if !ok {
		return l.errorf("unlock", fmt.Errorf("unexpected reply %v", reply))
	}
	l.C.Released(key, n == 0)
	return nil
}

// ForceUnlock deletes the lock whoever holds it, and tells its holders'
// clients (core.ForceUnlocked).
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	end, err := l.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	opctx, cancel := l.C.OpContext(ctx)
	defer cancel()
	reply, err := l.Ops.(Forcer).ForceUnlock(opctx)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	fields, deleted, err := core.Forced(reply)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	// Local holds end even when there was nothing to delete: the lock
	// they recorded has already expired.
	l.C.ForceUnlocked(ctx, l.Name, fields)
	return deleted, nil
}

// Token returns the fencing token of ctx's owner's current hold.
func (l *Lock) Token(ctx context.Context) (int64, error) {
	key, ok := l.Key(ctx)
	if !ok {
		return 0, l.errorf("token of", relock.ErrNotHeld)
	}
	token, ok := l.C.Token(key)
	if !ok {
		return 0, l.errorf("token of", relock.ErrNotHeld)
	}
	return token, nil
}
