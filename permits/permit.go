package permits

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/registry"
	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/observe"
)

// A Permit is one permit taken from a Semaphore. It is held until
// Release, or until it is lost, whatever becomes of the context it was
// acquired with. Its methods are safe for concurrent use.
type Permit struct {
	s   *Semaphore
	id  permitID
	ctx context.Context
}

// ID returns the permit's id, 32 lower-case hex digits as Redisson shows
// them: Semaphore.Release and a Redisson client's release(id) take it.
// A nil Permit (what a failed Acquire returns) has the id "".
func (p *Permit) ID() string {
	if p == nil {
		return ""
	}
	return p.id.hex
}

// Context returns the permit's context: a child of the context Acquire
// was given, cancelled with cause relock.ErrLockLost when the permit is
// lost (its lease could have run out on the server: expired, or not
// renewed in time; or it was released or deleted by someone else, seen
// at the next renewal), with cause relock.ErrClosed when the client
// closes, and plainly by Release. With a fixed lease its deadline is the
// lease's end. Work done under the permit should use it. A Permit that
// Acquire did not return (a nil one) holds nothing: its context is done,
// with cause matching relock.ErrInvalidArgument.
func (p *Permit) Context() context.Context {
	if p == nil || p.ctx == nil {
		return unmade
	}
	return p.ctx
}

// errNilPermit is the error of Release of a nil *Permit.
var errNilPermit = core.NilReceiver("permits", "Permit")

// unmade is the context of a Permit that Acquire did not return.
var unmade = func() context.Context {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(core.ErrUnmade)
	return ctx
}()

// Release gives the permit back and wakes waiters. It returns by ctx's
// deadline, and still runs when ctx is done already, within
// relock.CleanupGrace; a release Redis does not confirm in that time is
// sent again in the background (a release by id is safe to repeat), and
// the permit's lease bounds what that cannot do. It returns an error matching relock.ErrNotHeld when
// Redis no longer has the permit (released before, expired, or released
// by someone else). A permit whose context was cancelled as lost because
// Redis could not be reached is released if Redis still has it; when
// Redis does not answer that release, the error matches
// relock.ErrNotHeld too (this holder holds nothing, as a lock's Unlock
// reports it) as well as the error Redis's silence gave. Release of a
// Permit that Acquire did not return (a nil one) returns an error
// matching relock.ErrInvalidArgument.
func (p *Permit) Release(ctx context.Context) error {
	if p == nil {
		return errNilPermit
	}
	if err := core.Usable(p.s != nil, ctx); err != nil {
		return err
	}
	err := p.s.mustRelease(ctx, p.id)
	if err != nil && transport.Transient(err) && !errors.Is(err, relock.ErrNotHeld) &&
		errors.Is(context.Cause(p.ctx), relock.ErrLockLost) {
		return fmt.Errorf("%w (permit %s was lost before: %w)", err, p.id.hex, relock.ErrNotHeld)
	}
	return err
}

// Acquire waits until it takes a permit, or ctx ends. The permit's
// context (Permit.Context) is a child of ctx.
//
// If ctx ends first, Acquire returns an error matching both
// relock.ErrNotAcquired and ctx.Err(), and leaves nothing in Redis; if
// the client closes, an error matching relock.ErrClosed.
func (s *Semaphore) Acquire(ctx context.Context) (*Permit, error) {
	if s == nil {
		return nil, errNil
	}
	return s.acquire(ctx, -1)
}

// TryAcquire is Acquire waiting at most wait; 0 means one attempt. It
// returns an error matching relock.ErrNotAcquired when it gives up, which
// says "no permits set" when the semaphore has no count: none was set
// (TrySetPermits), or it was deleted or expired. The permit's context
// derives from ctx, not from the wait bound.
func (s *Semaphore) TryAcquire(ctx context.Context, wait time.Duration) (*Permit, error) {
	if s == nil {
		return nil, errNil
	}
	if err := core.CheckWait("permits", wait); err != nil {
		return nil, err
	}
	return s.acquire(ctx, wait)
}

// acquire runs the wait loop, waiting at most bound (negative: until ctx
// ends). A waiter listens on its client's channel for the semaphore,
// where a release that leaves a permit it may take wakes it, and
// registers in relock's registry of the semaphore's waiters, which serves
// them in turn; its watcher also listens on the shared channel, where
// Redisson's releases are published, and tries again when the earliest
// held permit expires, which frees it without a message
// (internal/lua/semaphore_prelude.lua).
func (s *Semaphore) acquire(ctx context.Context, bound time.Duration) (*Permit, error) {
	end, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	op := observe.OpAcquire
	if bound >= 0 {
		op = observe.OpTryAcquire
	}
	octx, done := s.c.StartAcquire(ctx, "permits", op, s.name)
	tag := "p" + strconv.FormatUint(lastTag.Add(1), 10)
	a := newAttempt(s, ctx, tag)
	spec := wait.Spec{Hub: s.c.Hub(), Channel: s.waiters, Tag: tag, Acquirer: a,
		Wake: s.wake, AlsoWake: hub.WakeCount,
		Wait: bound, Done: done}
	if err := wait.Acquire(octx, spec); err != nil {
		return nil, s.errorf("acquire from", s.c.T.NoCount(ctx, s.name, err))
	}
	return a.permit, nil
}

// lastTag numbers the waits of the process. A waiter's tag on its
// client's channel, and its registry member, are its own; a "p" sets
// them apart from package semaphore's, which may share the channel.
var lastTag atomic.Uint64

// An attempt is the state of one Acquire, the wait loop's Acquirer: its
// waiter in the registry, and the permit once acquired. Its fields are
// used by the wait loop's goroutine only.
type attempt struct {
	registry.Waiter
	s      *Semaphore
	permit *Permit
	// parent is the caller's context, which the permit's context
	// derives from; the attempts run under the Observer's.
	parent context.Context
}

// newAttempt begins an Acquire called with parent, whose waiter is
// tagged tag.
func newAttempt(s *Semaphore, parent context.Context, tag string) *attempt {
	return &attempt{Waiter: s.registry.Waiter(tag, "1"), s: s, parent: parent}
}

// Attempt runs the acquire script once, with a fresh permit id, which
// stands for the hold protocol's attempt number (core/protocol.go): its
// undo removes its own permit and no other, and makes it take nothing
// should it run late. A permit not available leaves the waiter
// registered when it listens, and nothing otherwise.
func (a *attempt) Attempt(ctx context.Context, listening bool) (wait.Outcome, error) {
	s, c := a.s, a.s.c
	if o, ok := a.Watch(); ok {
		return o, nil
	}
	a.Try(listening)
	id := newPermitID()
	opctx, cancel := c.OpContext(ctx)
	defer cancel()
	sent := time.Now() // the lease bound's instant (core/protocol.go)
	reply, err := c.T.EvalAcquire(opctx, transport.NilReply, lua.PermitsAcquire(), s.keys, c.T.PublishArg(), id.raw, s.leaseMs,
		a.Member, transport.Flag(listening), a.Reg)
	if err != nil {
		// The acquire may have run: its reply was lost, or the replicas
		// did not confirm it. It may have registered the waiter, too
		// (registry.Waiter.Reg).
		s.undo(ctx, id)
		a.Reg = int64(-1)
		return wait.Outcome{}, err
	}
	if reply != nil {
		return a.Wait(reply)
	}
	pctx, err := c.Take(a.parent, s.holdKey(id), core.Grant{
		Kind:     "permits",
		Sent:     sent,
		Lease:    s.lease,
		Renewal:  s.renewal(id),
		Releaser: (*onClose)(s),
	}, func() { s.undo(ctx, id) })
	if err != nil {
		return wait.Outcome{}, err
	}
	a.permit = &Permit{s: s, id: id, ctx: pctx}
	return wait.Outcome{Acquired: true}, nil
}

// Handoff reads a wake-up's note (registry.Waiter.Note); "0" (a permit
// it may take) needs nothing. Either way the wait loop tries again: no
// release hands a permit over.
func (a *attempt) Handoff(_ context.Context, note string) (bool, error) {
	a.Note(note)
	return false, nil
}

// renewal is the watchdog's renewal of permit id: its expiry moves to
// the server's now plus the watchdog timeout while it is held.
func (s *Semaphore) renewal(id permitID) renew.Renewal {
	return renew.Renewal{
		Script: lua.PermitsUpdate(),
		Keys:   s.keys,
		Args:   []any{s.c.T.PublishArg(), id.raw, s.renewMs},
	}
}

// undo releases a permit that an attempt may have taken but does not
// hand to its caller, and records its id as given up for the lease the
// attempt would have set, in one script (lua.PermitsUndo): an attempt
// that runs late (core/late.go) then takes nothing, and one that runs
// later than the record lasts holds its permit for a lease at most. It
// goes through the acquires' client, which neither retries nor outwaits
// its deadline, bounded by Settle; it is safe to repeat, since only the
// call that removes the id from the permits gives one back.
func (s *Semaphore) undo(ctx context.Context, id permitID) {
	_ = s.c.Settle(ctx, s.holdKey(id), func(ctx context.Context) error {
		_, err := transport.Eval(ctx, s.c.Scripts, lua.PermitsUndo(), s.keys, s.c.T.PublishArg(), id.raw, s.leaseMs)
		return err
	})
}

// onClose is a Semaphore in the role of the core.Releaser of its
// permits' holds: Client.Shutdown releases them through it.
type onClose Semaphore

// Release releases the permit whose hold field is its hex id, through
// the scripts client, until ctx ends.
func (o *onClose) Release(ctx context.Context, field string, _ int) error {
	s := (*Semaphore)(o)
	id, err := s.parse(field)
	if err != nil {
		return err
	}
	_, err = transport.Eval(ctx, s.c.Pipe, lua.PermitsRelease(), s.keys, s.c.T.PublishArg(), id.raw)
	return err
}

// newPermitID returns a fresh random permit id.
func newPermitID() permitID {
	var b [idBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return permitID{hex: hex.EncodeToString(b[:]), raw: string(b[:])}
}
