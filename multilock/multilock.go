package multilock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// A MultiLock holds all of its member locks or none. It is cheap to
// create, does no I/O until used, and is safe for concurrent use. Create
// one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type MultiLock struct {
	members []relock.Locker // canonical order
	name    string
	err     error // bad input found by New, returned by every method

	// mu guards holds and the holds in it. It comes before core's locks
	// (internal/core's package doc) and is never held across a call into
	// core or a member.
	mu    sync.Mutex
	holds map[int64]*hold // by owner
}

// errNil is the error of every operation of a nil *MultiLock.
var errNil = core.NilReceiver("multilock", "MultiLock")

// hold is one owner's holds of the MultiLock.
type hold struct {
	count int
	ends  core.Ends // the contexts Lock returned, their watches on members
}

var _ relock.Locker = (*MultiLock)(nil)

// clientOf is implemented by the relock lock types: a member's client
// tells apart members of the same name on different servers.
type clientOf interface {
	Client() *relock.Client
}

// New returns a MultiLock over lockers. Bad input (no lockers, a nil
// one, or two naming the same lock on the same server, which would wait
// for itself) is not reported here but by every method of the returned
// MultiLock, as an error matching relock.ErrInvalidArgument.
func New(lockers ...relock.Locker) *MultiLock {
	ml := &MultiLock{holds: make(map[int64]*hold)}
	ml.err = ml.init(lockers)
	return ml
}

// init validates lockers and sets them up as ml's members, in canonical
// order.
func (ml *MultiLock) init(lockers []relock.Locker) error {
	if len(lockers) == 0 {
		return fmt.Errorf("multilock: no locks: %w", relock.ErrInvalidArgument)
	}
	type member struct {
		l            relock.Locker
		name, server string
	}
	ms := make([]member, len(lockers))
	for i, l := range lockers {
		if transport.IsNil(l) {
			return fmt.Errorf("multilock: lock %d is nil: %w", i, relock.ErrInvalidArgument)
		}
		ms[i] = member{l: l, name: l.Name(), server: serverOf(l)}
	}
	slices.SortFunc(ms, func(a, b member) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(a.server, b.server))
	})
	names := make([]string, len(ms))
	for i, m := range ms {
		if i > 0 && m.name == ms[i-1].name && m.server == ms[i-1].server {
			return fmt.Errorf("multilock: lock %q appears twice: %w", m.name, relock.ErrInvalidArgument)
		}
		ml.members = append(ml.members, m.l)
		names[i] = m.name
	}
	ml.name = strings.Join(names, ",")
	return nil
}

// serverOf names the Redis deployment of l's client, or "" when l does not
// say which client it uses.
func serverOf(l relock.Locker) string {
	if c, ok := l.(clientOf); ok {
		if rc := core.Of(c.Client()); rc != nil {
			return rc.Server()
		}
	}
	return ""
}

// Name returns the members' names in canonical order, joined by commas
// ("" for a MultiLock made with bad input).
func (ml *MultiLock) Name() string {
	if ml == nil {
		return ""
	}
	return ml.name
}

// Lock takes every member, in canonical order, for ctx's owner (a new one
// if ctx carries none), waiting as long as each needs, until ctx ends. On
// failure it releases the members it took and returns an error naming the
// member that failed (matching relock.ErrNotAcquired and ctx.Err() when
// ctx ended). The returned context carries the owner and is cancelled
// when any member's context is: a lost lease, or the Unlock that releases
// the last hold.
func (ml *MultiLock) Lock(ctx context.Context) (context.Context, error) {
	if ml == nil {
		return nil, errNil
	}
	return ml.lock(ctx, -1)
}

// TryLock is Lock with one wait budget for all members: each member may
// wait what is left of wait (0: one attempt each).
func (ml *MultiLock) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if ml == nil {
		return nil, errNil
	}
	if err := ml.check(ctx); err != nil {
		return nil, err
	}
	if err := core.CheckWait("multilock", wait); err != nil {
		return nil, err
	}
	return ml.lock(ctx, wait)
}

// check returns ml's input error, or core.Usable's: a MultiLock that New
// did not make has no members.
func (ml *MultiLock) check(ctx context.Context) error {
	if ml.err != nil {
		return ml.err
	}
	return core.Usable(ml.members != nil, ctx)
}

func (ml *MultiLock) lock(ctx context.Context, bound time.Duration) (lctx context.Context, err error) {
	if err := ml.check(ctx); err != nil {
		return nil, err
	}
	ctx, owner := core.EnsureOwner(ctx)
	// The first member's client, if it is one of relock's locks, tells
	// its Observer of the MultiLock's acquires; each member reports its
	// own too, under the Observer's context (octx: their spans are the
	// MultiLock's children). The MultiLock's context derives from ctx.
	octx := ctx
	if c, ok := ml.members[0].(interface{ Client() *relock.Client }); ok {
		op := observe.OpLock
		if bound >= 0 {
			op = observe.OpTryLock
		}
		var observed func(error, int)
		if octx, observed = core.Of(c.Client()).StartAcquire(ctx, "multilock", op, ml.Name()); observed != nil {
			defer func() { observed(err, len(ml.members)) }()
		}
	}
	deadline := time.Now().Add(bound)
	taken := make([]context.Context, 0, len(ml.members))
	for i, m := range ml.members {
		var mctx context.Context
		var err error
		if bound < 0 {
			mctx, err = m.Lock(octx)
		} else {
			mctx, err = m.TryLock(octx, max(0, time.Until(deadline)))
		}
		if err != nil {
			err = fmt.Errorf("multilock: lock %q: member %q: %w", ml.name, m.Name(), err)
			if rerr := ml.release(octx, ml.members[:i]); rerr != nil {
				err = fmt.Errorf("%w (and releasing the members taken: %w)", err, rerr)
			}
			return nil, err
		}
		taken = append(taken, mctx)
	}
	return ml.granted(ctx, owner, taken), nil
}

// granted records a hold and returns its context, cancelled with the
// cause of the first member context to end.
func (ml *MultiLock) granted(ctx context.Context, owner int64, members []context.Context) context.Context {
	lctx, cancel := context.WithCancelCause(ctx)
	ml.mu.Lock()
	defer ml.mu.Unlock()
	h := ml.holds[owner]
	if h == nil {
		h = &hold{}
		ml.holds[owner] = h
	}
	h.count++
	h.ends.Add(cancel)
	for _, mctx := range members {
		h.ends.Watch(context.AfterFunc(mctx, func() { ml.memberEnded(owner, h, context.Cause(mctx)) }))
	}
	return lctx
}

// memberEnded ends owner's hold h when one of its members' contexts
// ended (a lost lease, a closed client): forgotten first, so that the
// owner's next Lock starts a new hold, then its contexts cancelled with
// the member's cause. The other members stay held for Unlock to release.
func (ml *MultiLock) memberEnded(owner int64, h *hold, cause error) {
	if errors.Is(cause, relock.ErrUnlocked) {
		// The MultiLock's Unlock released the member: it ends the hold
		// once every member is released.
		return
	}
	ml.mu.Lock()
	if ml.holds[owner] == h {
		delete(ml.holds, owner)
	}
	ml.mu.Unlock()
	h.ends.Cancel(cause)
}

// Unlock releases one hold of every member, all at once, even when some
// fail; it returns their errors joined (matching relock.ErrNotHeld when
// ctx's owner held none). A member that held nothing (lost under its
// holder) ends the owner's hold as lost: its contexts are cancelled with
// cause relock.ErrLockLost. It uses each member's Unlock, which runs even
// when ctx is done.
func (ml *MultiLock) Unlock(ctx context.Context) error {
	if ml == nil {
		return errNil
	}
	if err := ml.check(ctx); err != nil {
		return err
	}
	owner, ok := core.OwnerFrom(ctx)
	if !ok {
		return fmt.Errorf("multilock: unlock %q: %w", ml.name, relock.ErrNoOwner)
	}
	err := ml.release(ctx, ml.members)
	if errors.Is(err, relock.ErrNotHeld) {
		// A member had no hold left: the MultiLock's hold was lost, and
		// its contexts say so, as they would once that member's
		// context ended (memberEnded, which runs apart and may come
		// later), rather than that this Unlock released them.
		ml.lost(owner, fmt.Errorf("%w: a member held nothing at Unlock", relock.ErrLockLost))
	}
	ml.released(owner)
	if err != nil {
		return fmt.Errorf("multilock: unlock %q: %w", ml.name, err)
	}
	return nil
}

// release unlocks members, all at once, and joins their errors in
// reverse order. At once, because each Unlock may take until ctx's
// deadline against a Redis that does not answer (and core.Grace past it
// when ctx is done, as it is when a Lock gave up): one after another
// they would take that many times as long.
func (ml *MultiLock) release(ctx context.Context, members []relock.Locker) error {
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Unlock(ctx); err != nil {
				errs[i] = fmt.Errorf("member %q: %w", m.Name(), err)
			}
		}()
	}
	wg.Wait()
	slices.Reverse(errs)
	return errors.Join(errs...)
}

// lost ends owner's hold, if it has one, with cause.
func (ml *MultiLock) lost(owner int64, cause error) {
	ml.mu.Lock()
	h := ml.holds[owner]
	if h != nil {
		delete(ml.holds, owner)
	}
	ml.mu.Unlock()
	if h != nil {
		h.ends.End(cause)
	}
}

// released drops one hold of owner; the last cancels its contexts.
func (ml *MultiLock) released(owner int64) {
	ml.mu.Lock()
	h := ml.holds[owner]
	if h == nil {
		ml.mu.Unlock()
		return
	}
	if h.count--; h.count > 0 {
		ml.mu.Unlock()
		return
	}
	delete(ml.holds, owner)
	ml.mu.Unlock()
	h.ends.End(nil)
}
