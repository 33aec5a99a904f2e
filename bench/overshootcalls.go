package main

import (
	"context"
	"errors"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
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

// An overshootPrimitive is one primitive of scenario (o): the calls of it
// that are timed, on clients of its own.
type overshootPrimitive struct {
	name string
	// nodes is how many clients its calls take, each behind a proxy of
	// its own (RedLock's masters); 1 when 0.
	nodes int
	calls []overshootCall
}

// An overshootCall is one row of scenario (o): a blocking call of a
// primitive.
type overshootCall struct {
	name string
	// held: each run releases a hold taken before the cut. Those holds'
	// contexts end when the watchdog, whose renewals get no answer
	// either, gives their leases up (overshootLease after the cut), so
	// the runs of such a call start together, right after the cut,
	// rather than one after another.
	held bool
	// prepare readies one run while the server still answers, on the
	// primitive's clients and a name no other run uses, and returns the
	// call to time. ctx outlives the scenario's calls (a lock taken with
	// it stays held until they are done).
	prepare func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error)
}

// A timedCall makes one call with ctx, which carries its deadline.
type timedCall func(ctx context.Context) error

// overshootPrimitives lists scenario (o)'s primitives, each call as it
// is timed: an acquire waits for what another holds or for a free lock,
// a release gives back what was taken before the cut.
var overshootPrimitives = []overshootPrimitive{
	{name: "reentrant", calls: lockerCalls(func(rc *relock.Client, name string) relock.Locker { return reentrant.New(rc, name, nil) })},
	{name: "fair", calls: lockerCalls(func(rc *relock.Client, name string) relock.Locker { return fair.New(rc, name, nil) })},
	{name: "spinlock", calls: lockerCalls(func(rc *relock.Client, name string) relock.Locker { return spinlock.New(rc, name, nil) })},
	{name: "nonreentrant", calls: lockerCalls(func(rc *relock.Client, name string) relock.Locker { return nonreentrant.New(rc, name, nil) })},
	{name: "rwlock", calls: []overshootCall{
		{name: "RLock", prepare: func(_ context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			return lockCall(rwlock.New(rcs[0], name, nil).Reader()), nil
		}},
		{name: "Lock", prepare: func(_ context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			return lockCall(rwlock.New(rcs[0], name, nil).Writer()), nil
		}},
	}},
	{name: "multilock", calls: []overshootCall{
		{name: "Lock", prepare: func(_ context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			ml := multilock.New(reentrant.New(rcs[0], name+":reentrant", nil), fair.New(rcs[0], name+":fair", nil))
			return lockCall(ml), nil
		}},
	}},
	{name: "redlock", nodes: 3, calls: []overshootCall{
		{name: "Lock", prepare: func(_ context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			rl := redlock.New(rcs, name, nil)
			return lockCall(rl), nil
		}},
	}},
	{name: "semaphore", calls: []overshootCall{
		{name: "Acquire", prepare: func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			s, err := drainedSemaphore(ctx, rcs[0], name)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Acquire(ctx, 1) }, nil
		}},
		{name: "Release", prepare: func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			s, err := drainedSemaphore(ctx, rcs[0], name)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Release(ctx, 1) }, nil
		}},
	}},
	{name: "permits", calls: []overshootCall{
		{name: "Acquire", prepare: func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			s := permits.New(rcs[0], name, nil)
			if err := setOnce(s.TrySetPermits(ctx, 1)); err != nil {
				return nil, err
			}
			if _, err := s.Acquire(ctx); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				_, err := s.Acquire(ctx)
				return err
			}, nil
		}},
	}},
	{name: "latch", calls: []overshootCall{
		{name: "Await", prepare: func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			l := latch.New(rcs[0], name, nil)
			if err := setOnce(l.TrySetCount(ctx, 1)); err != nil {
				return nil, err
			}
			return l.Await, nil
		}},
	}},
	{name: "election", calls: []overshootCall{
		{name: "Campaign", prepare: func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			if _, err := election.New(rcs[0], name, nil).Campaign(ctx, "leader"); err != nil {
				return nil, err
			}
			candidate := election.New(rcs[0], name, nil)
			return func(ctx context.Context) error {
				_, err := candidate.Campaign(ctx, "candidate")
				return err
			}, nil
		}},
	}},
}

// lockerCalls are the calls timed on a plain lock: Lock of a free lock,
// and Unlock of a lock taken before the cut, with the context its Lock
// returned bounded by the call's deadline.
func lockerCalls(newLocker func(rc *relock.Client, name string) relock.Locker) []overshootCall {
	return []overshootCall{
		{name: "Lock", prepare: func(_ context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			return lockCall(newLocker(rcs[0], name)), nil
		}},
		{name: "Unlock", held: true, prepare: func(ctx context.Context, rcs []*relock.Client, name string) (timedCall, error) {
			l := newLocker(rcs[0], name)
			lctx, err := l.Lock(relock.WithNewOwner(ctx))
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				d, _ := ctx.Deadline()
				uctx, cancel := context.WithDeadline(lctx, d)
				defer cancel()
				return l.Unlock(uctx)
			}, nil
		}},
	}
}

// lockCall locks l for a new owner.
func lockCall(l interface {
	Lock(context.Context) (context.Context, error)
}) timedCall {
	return func(ctx context.Context) error {
		_, err := l.Lock(relock.WithNewOwner(ctx))
		return err
	}
}

// drainedSemaphore returns the semaphore name given one permit, which
// it has taken: none is left.
func drainedSemaphore(ctx context.Context, rc *relock.Client, name string) (*semaphore.Semaphore, error) {
	s := semaphore.New(rc, name, &semaphore.Options{TTL: semaphoreTTL})
	if err := setOnce(s.TrySetPermits(ctx, 1)); err != nil {
		return nil, err
	}
	return s, s.Acquire(ctx, 1)
}

// setOnce turns the result of a TrySet call on a new name into an error.
func setOnce(ok bool, err error) error {
	if err == nil && !ok {
		err = errors.New("a new name had a count already")
	}
	return err
}
