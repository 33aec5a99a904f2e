package redlock

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/transport"
)

// granted records a successful attempt and returns the lock context: it
// ends when the masters that can still hold the lock drop below a quorum.
// It fails with an error matching relock.ErrClosed, recording nothing,
// when a client closed during the attempt; the caller undoes it.
func (rl *RedLock) granted(ctx context.Context, owner int64, a *attempt) (context.Context, error) {
	// Each master's client records its hold first, and renews it.
	nctxs := make([]context.Context, len(rl.nodes))
	for i, node := range rl.nodes {
		if !a.acquired[i] {
			continue
		}
		key := core.HoldKey{Name: rl.name, Field: node.Field(owner)}
		nctx, err := node.Take(ctx, key, core.Grant{
			Sent:     a.start,
			Lease:    rl.opts.Lease,
			Renewal:  hashlock.HashRenewal(rl.keys[:1:1], transport.Millis(node.WatchdogTimeout), key.Field, 0),
			Releaser: releaser{rl, node},
		}, func() {
			// The client closed: take back the holds recorded so far,
			// as the round's undo takes back the acquires.
			for j, n := range rl.nodes[:i] {
				if nctxs[j] != nil {
					n.Untake(core.HoldKey{Name: rl.name, Field: n.Field(owner)}, a.had[j])
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", node.Server(), err)
		}
		nctxs[i] = nctx
	}

	var lctx context.Context
	var cancel context.CancelCauseFunc
	if rl.fixed {
		dctx, dcancel := context.WithDeadlineCause(ctx, a.start.Add(a.validity),
			fmt.Errorf("%w: validity of %v ended", relock.ErrLockLost, a.validity))
		var ccancel context.CancelCauseFunc
		lctx, ccancel = context.WithCancelCause(dctx)
		cancel = func(cause error) { ccancel(cause); dcancel() }
	} else {
		lctx, cancel = context.WithCancelCause(ctx)
	}

	rl.mu.Lock()
	defer rl.mu.Unlock()
	h := rl.holds[owner]
	if h == nil {
		h = &hold{down: make(map[int]bool), late: make(map[int]int64)}
		rl.holds[owner] = h
	}
	h.count++
	h.ends.Add(cancel)
	for i := range rl.nodes {
		if !a.acquired[i] {
			if !a.had[i] {
				h.down[i] = true
			}
			if mayRunLate(a.errs[i]) {
				h.late[i] = a.numbers[i]
			}
			continue
		}
		delete(h.down, i)
		nctx := nctxs[i]
		h.ends.Watch(context.AfterFunc(nctx, func() { rl.nodeEnded(owner, h, i, nctx) }))
	}
	rl.checkQuorumLocked(owner, h)
	return lctx, nil
}

// nodeEnded counts a master whose hold context ended with a lost lease
// or its client closed.
func (rl *RedLock) nodeEnded(owner int64, h *hold, i int, nctx context.Context) {
	// A closed client released its master's record (Shutdown): that
	// master no longer holds the lock either.
	if cause := context.Cause(nctx); !errors.Is(cause, relock.ErrLockLost) && !errors.Is(cause, relock.ErrClosed) {
		return
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if rl.holds[owner] != h {
		return
	}
	h.down[i] = true
	rl.checkQuorumLocked(owner, h)
}

// checkQuorumLocked ends owner's hold h once too few masters hold it:
// forgotten first (the owner's next Lock starts a new hold), then its
// contexts cancelled. The masters' records stay for Unlock to release.
func (rl *RedLock) checkQuorumLocked(owner int64, h *hold) {
	if len(rl.nodes)-len(h.down) >= rl.quorum {
		return
	}
	if rl.holds[owner] == h {
		delete(rl.holds, owner)
	}
	cause := fmt.Errorf("%w: held by %d of %d masters, quorum %d", relock.ErrLockLost, len(rl.nodes)-len(h.down), len(rl.nodes), rl.quorum)
	h.ends.Cancel(cause)
}

// Unlock releases one hold of ctx's owner on every master at once, each
// call cut off after NodeTimeout, and returns an error matching
// relock.ErrNotHeld when no master had one. It runs even when ctx is
// done. When a client has closed, Unlock still releases on the other
// masters and returns an error matching relock.ErrClosed: the closed
// client's record, no longer renewed, expires with its lease.
func (rl *RedLock) Unlock(ctx context.Context) error {
	if rl == nil {
		return errNil
	}
	if err := rl.usable(ctx); err != nil {
		return err
	}
	owner, ok := core.OwnerFrom(ctx)
	if !ok {
		return fmt.Errorf("redlock: unlock %q: %w", rl.name, relock.ErrNoOwner)
	}
	late := rl.lateOf(owner)
	replies := make([]any, len(rl.nodes))
	errs := make([]error, len(rl.nodes))
	closed := make([]bool, len(rl.nodes))
	// Each master's unlock runs the hold protocol (core/protocol.go).
	unlocking := make([]core.Unlocking, len(rl.nodes))
	defer func() {
		for _, u := range unlocking {
			u.End()
		}
	}()
	var g errgroup.Group
	for i, node := range rl.nodes {
		end, err := node.Begin(ctx)
		if err != nil {
			closed[i], errs[i] = true, fmt.Errorf("%s: %w", node.Server(), err)
			continue
		}
		// A master that holds nothing for this owner (down when it was
		// acquired) is asked too, but cannot fail the Unlock.
		key := core.HoldKey{Name: rl.name, Field: node.Field(owner)}
		unlocking[i] = node.BeginUnlock(key)
		holding := unlocking[i].Holds() > 0
		g.Go(func() error {
			defer end()
			nctx, cancel := rl.nodeContext(ctx)
			var err error
			replies[i], err = rl.unlockNode(nctx, node, owner, late[i])
			cancel()
			switch {
			case err != nil && holding:
				errs[i] = fmt.Errorf("%s: %w", node.Server(), err)
			case err != nil && late[i] != 0 && transport.Transient(err):
				// Where it holds nothing the owner knows of, only an
				// attempt that ran late can have left a record: the
				// release is sent again until the master answers.
				rl.detach(ctx, node, key, func(ctx context.Context) error {
					_, err := rl.unlockNode(ctx, node, owner, late[i])
					return err
				})
			}
			return nil
		})
	}
	_ = g.Wait()
	released := 0
	for i, u := range unlocking {
		if closed[i] {
			continue
		}
		if held, _ := u.Done(context.Background(), replies[i], errs[i]); held {
			released++
		}
	}
	rl.released(owner)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("redlock: unlock %q: %w", rl.name, err)
	}
	if released == 0 {
		return fmt.Errorf("redlock: unlock %q: %w", rl.name, relock.ErrNotHeld)
	}
	return nil
}

// lateOf returns, by master, the number of the last attempt of owner's
// hold that the master did not answer (hold.late), 0 for none.
func (rl *RedLock) lateOf(owner int64) []int64 {
	late := make([]int64, len(rl.nodes))
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if h := rl.holds[owner]; h != nil {
		for i, n := range h.late {
			late[i] = n
		}
	}
	return late
}

// released drops one hold of owner; the last cancels its contexts.
func (rl *RedLock) released(owner int64) {
	rl.mu.Lock()
	h := rl.holds[owner]
	if h == nil {
		rl.mu.Unlock()
		return
	}
	if h.count--; h.count > 0 {
		rl.mu.Unlock()
		return
	}
	delete(rl.holds, owner)
	rl.mu.Unlock()
	h.ends.End(nil)
}

// A releaser releases an owner's record on one master when that master's
// client shuts down (core.Releaser): the other masters' records stay
// until their own clients shut down, or their leases run out.
type releaser struct {
	rl   *RedLock
	node *core.Client
}

// Release removes field's record on the master, however many holds it
// counts, bounded by NodeTimeout.
func (r releaser) Release(ctx context.Context, field string, _ int) error {
	nctx, cancel := context.WithTimeout(ctx, r.rl.opts.NodeTimeout)
	defer cancel()
	_, err := r.rl.unlockField(nctx, r.node, field, true)
	return err
}
