package semaphore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/registry"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/internal/wait"
)

// lastTag numbers the waits of the process: a waiter's tag on its
// client's channel, and its registry member, are its own. A tag starts
// with "g": the scripts hand such a waiter its permits (an expirable
// permits' waiter they wake instead).
var lastTag atomic.Uint64

// An attempt is one Acquire or TryAcquire call, as the wait loop
// (internal/wait) sees it: its waiter in the registry, tagged with a
// number of its own, where a release that can satisfy it wakes it
// ("<tag>:0") or hands it its permits ("<tag>:g"). Its fields are used
// by the wait loop's goroutine only.
type attempt struct {
	registry.Waiter
	s *Semaphore
	n any // the permits wanted, boxed once for every attempt
	// left: the caller's ctx ended while an acquire ran, which goes on
	// in the background (core.ErrInBackground) and may take the grant a
	// "<tag>:g" announces: the wait must end without taking it.
	left bool
}

// newAttempt begins a call for n permits, whose waiter is tagged tag.
func newAttempt(s *Semaphore, n int64, tag string) *attempt {
	return &attempt{Waiter: s.registry.Waiter(tag, strconv.FormatInt(n, 10)), s: s, n: n}
}

// Attempt runs the acquire script once, on its own context
// (core.Client.Outlive): a caller that gives up mid-call gets its time
// back, and permits the call took after that are given back, or its
// registration undone. Permits not available leave the waiter registered
// when it listens, and nothing otherwise; it sleeps until a wake-up, or
// the time the reply gives (relock's waiters try again now and then, and
// before a woken waiter's deadline when only that waiter stood in the
// way: its process may have died).
//
// With replica sync (relock.Options.SyncReplicas) the attempt waits for
// the master's replicas, as lock acquires do; permits taken on a master
// whose replicas did not confirm them are given back (and published, for
// anyone who waited meanwhile), and the attempt fails with an error
// matching relock.ErrNotAcquired, as Redisson's tryAcquire does.
func (a *attempt) Attempt(ctx context.Context, listening bool) (wait.Outcome, error) {
	s, c := a.s, a.s.c
	if o, ok := a.Watch(); ok {
		return o, nil
	}
	if a.left {
		return wait.Outcome{}, transport.Ended(ctx, core.ErrNotAcquired, ctx.Err())
	}
	a.Try(listening)
	n, member := a.n, a.Member
	at, err := c.BeginAttempt(ctx, a.Key()) // the hold protocol (core/protocol.go)
	if err != nil {
		return wait.Outcome{}, err
	}
	number := at.Number
	acks := s.takeAcks()
	args := []any{c.T.PublishArg(), n, member, transport.Flag(listening), a.Reg, acks.arg(), number, c.WatchdogArg}
	reply, err := c.Outlive(ctx, func(ctx context.Context) (any, error) {
		return c.T.EvalAcquire(ctx, took, lua.SemaphoreAcquire(), s.keys, args...)
	}, func(ctx context.Context, reply any, err error) {
		// The caller left before the reply came: permits it took go
		// back, an acquire whose reply was lost is undone, and the
		// waiter leaves the registry.
		switch {
		case took(reply):
			s.addTakes(a.taken(number))
			_, _ = s.release(ctx, n)
			return
		case err != nil:
			_ = transport.Retry(ctx, func(ctx context.Context) error { return s.undo(ctx, member, number) })
		}
		if listening {
			_ = transport.Retry(ctx, a.Leave)
		}
	})
	if err != nil {
		s.restoreAcks(acks)
	}
	switch {
	case err != nil && took(reply):
		s.addTakes(a.taken(number))
		ctx, cancel := c.CleanupContext(ctx)
		defer cancel()
		if _, rerr := s.release(ctx, n); rerr != nil {
			err = fmt.Errorf("%w (returning the permits failed: %v)", err, rerr)
		}
		return wait.Outcome{}, err
	case errors.Is(err, core.ErrInBackground):
		// The caller left: the acquire's result goes to the late
		// function above.
		a.left = true
		return wait.Outcome{}, err
	case err != nil:
		// The reply was lost (or Redis refused the script): the acquire
		// is undone (core/late.go) before the wait goes on or gives up.
		// It may have registered the waiter, and a walk may have handed
		// it permits since: the next attempt looks (registry.Waiter.Reg).
		a.Reg = int64(-1)
		if uerr := c.Settle(ctx, a.Key(), func(ctx context.Context) error {
			return s.undo(ctx, member, number)
		}); uerr != nil {
			err = fmt.Errorf("%w (undoing the acquire failed: %v)", err, uerr)
		}
		return wait.Outcome{}, err
	case took(reply):
		s.addTakes(a.taken(number))
		return wait.Outcome{Acquired: true}, nil
	}
	return a.Wait(reply)
}

// Handoff reads a wake-up's note: "g" hands the waiter its permits, and
// the client acknowledges the grant with its next call (acks.go); other
// notes as registry.Waiter.Note reads them, and "0" (permits it can take,
// from an expirable permits' script) needs nothing: the wait loop tries
// again. A give-up (registry.Waiter.GiveUp) returns permits handed to
// the waiter that it did not take.
func (a *attempt) Handoff(ctx context.Context, note string) (bool, error) {
	if note != "g" {
		a.Note(note)
		return false, nil
	}
	if a.left {
		// The acquire left running may have taken these permits (and
		// then gives them back); the give-up returns them otherwise.
		return false, transport.Ended(ctx, core.ErrNotAcquired, ctx.Err())
	}
	a.s.addAck(a.Member)
	return true, nil
}

// taken is the record of the attempt's acquire number when it took its
// permits (internal/lua/semaphore_prelude.lua, "The attempts").
func (a *attempt) taken(number int64) string {
	return "t:" + strconv.FormatInt(number, 10) + ":" + a.Member
}

// took reports the acquire script's reply 1: the permits were taken.
func took(reply any) bool { return reply == int64(1) }
