package a

import (
	"context"
	"errors"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

func everyBranch(ctx context.Context, mu *reentrant.Mutex, b bool) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	if b {
		return mu.Unlock(lctx)
	}
	if lctx.Err() != nil {
		return errors.Join(lctx.Err(), mu.Unlock(lctx))
	}
	return mu.Unlock(lctx)
}

func oneBranch(ctx context.Context, mu *reentrant.Mutex, b bool) error {
	lctx, err := mu.Lock(ctx) // want `lctx, the context mu\.Lock returned, is not unlocked on every path: the function can return at line 34 without mu\.Unlock\(lctx\)`
	if err != nil {
		return err
	}
	if b {
		return errors.New("b")
	}
	return mu.Unlock(lctx)
}

// An error found after the lock's own is no excuse.
func laterError(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx) // want `lctx, the context mu\.Lock returned, is not unlocked on every path: the function can return at line 46 without mu\.Unlock\(lctx\)`
	if err != nil {
		return err
	}
	if err := lctx.Err(); err != nil {
		return err
	}
	return mu.Unlock(lctx)
}

func deferred(ctx context.Context, mu *reentrant.Mutex, b bool) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	if b {
		return nil
	}
	return lctx.Err()
}

func deferredClosure(ctx context.Context, mu *reentrant.Mutex) (err error) {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mu.Unlock(lctx)) }()
	return lctx.Err()
}

// Only the branch that defers releases.
func deferredOnOneBranch(ctx context.Context, mu *reentrant.Mutex, b bool) {
	lctx, err := mu.Lock(ctx) // want `lctx, the context mu\.Lock returned, is not unlocked on every path: the function can return at line 81 without mu\.Unlock\(lctx\)`
	if err != nil {
		return
	}
	if b {
		defer mu.Unlock(lctx)
	}
}

func derivedRelease(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(lctx), time.Second)
	defer cancel()
	defer mu.Unlock(uctx)
	return lctx.Err()
}

func inlineRelease(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(context.WithoutCancel(lctx))
	return context.Cause(lctx)
}

func tryErrorsIs(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.TryLock(ctx, 0)
	if errors.Is(err, relock.ErrNotAcquired) {
		return nil
	}
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	return lctx.Err()
}

func trySwitch(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.TryLock(ctx, time.Second)
	switch {
	case errors.Is(err, relock.ErrNotAcquired):
		return nil
	case err != nil:
		return err
	}
	defer mu.Unlock(lctx)
	return lctx.Err()
}

func tryOnSuccess(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.TryLock(ctx, 0)
	if err == nil {
		defer mu.Unlock(lctx)
	}
	return err
}

func ifInit(ctx context.Context, mu *reentrant.Mutex) error {
	if lctx, err := mu.Lock(ctx); err != nil {
		return err
	} else {
		defer mu.Unlock(lctx)
	}
	return nil
}

func noErrorCheck(ctx context.Context, mu *reentrant.Mutex, b bool) {
	lctx, _ := mu.Lock(ctx) // want `the function can return at line 149 without mu\.Unlock\(lctx\)`
	if b {
		mu.Unlock(lctx)
	}
}

func readBranch(ctx context.Context, rw *rwlock.RWMutex, b bool) error {
	rctx, err := rw.RLock(ctx) // want `rctx, the context rw\.RLock returned, is not unlocked on every path: the function can return at line 157 without rw\.RUnlock\(rctx\)`
	if err != nil {
		return err
	}
	if b {
		return nil
	}
	return rw.RUnlock(rctx)
}

// RUnlock, not Unlock, releases a read hold; Unlock with rctx is taken
// for an escape, not judged.
func readWrongRelease(ctx context.Context, rw *rwlock.RWMutex) error {
	rctx, err := rw.RLock(ctx)
	if err != nil {
		return err
	}
	return rw.Unlock(rctx)
}

func lockerFallsOff(ctx context.Context, l relock.Locker) {
	lctx, err := l.Lock(ctx) // want `lctx, the context l\.Lock returned, is not unlocked on every path: the function can return at line 178 without l\.Unlock\(lctx\)`
	if err != nil {
		return
	}
	_ = lctx.Err()
}

func inLoop(ctx context.Context, mu *reentrant.Mutex, items []int) error {
	for _, it := range items {
		lctx, err := mu.Lock(ctx) // want `lctx, the context mu\.Lock returned, is not unlocked on every path`
		if err != nil {
			return err
		}
		if it < 0 {
			continue
		}
		mu.Unlock(lctx)
	}
	return nil
}

func inLiteral(ctx context.Context, mu *reentrant.Mutex) func() error {
	return func() error {
		lctx, err := mu.Lock(ctx) // want `the function can return at line 201 without mu\.Unlock\(lctx\)`
		if err != nil {
			return err
		}
		if lctx.Err() != nil {
			return nil
		}
		return mu.Unlock(lctx)
	}
}

// Paths that panic do not return.
func panics(ctx context.Context, mu *reentrant.Mutex) {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		panic(err)
	}
	if lctx.Err() != nil {
		panic("lost")
	}
	mu.Unlock(lctx)
}

// Escapes: returned, given to a function, to a goroutine, to another
// name of the lock.

func returned(ctx context.Context, mu *reentrant.Mutex) (context.Context, error) {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return nil, err
	}
	return lctx, nil
}

func givenAway(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	return work(lctx)
}

func goroutine(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	go func() { mu.Unlock(lctx) }()
	return nil
}

func otherName(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	var l relock.Locker = mu
	return l.Unlock(lctx)
}

// The owner has another name: the lock's argument.
func ownerArgument(ctx context.Context, mu *reentrant.Mutex) error {
	owner := relock.WithNewOwner(ctx)
	lctx, err := mu.Lock(owner)
	if err != nil {
		return err
	}
	_ = lctx.Err()
	return mu.Unlock(owner)
}

// Close releases every hold of the Client.
func closes(ctx context.Context, rc *relock.Client) error {
	defer rc.Close()
	mu := reentrant.New(rc, "a")
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	return lctx.Err()
}

// A receiver the analyzer cannot compare.
func uncomparable(ctx context.Context, rw *rwlock.RWMutex) error {
	lctx, err := rw.Reader().Lock(ctx)
	if err != nil {
		return err
	}
	return rw.Reader().Unlock(lctx)
}

// A leadership ends with Campaign's context, and Resign needs none.
func campaign(ctx context.Context, e *election.Election) error {
	lead, err := e.Campaign(ctx, "a")
	if err != nil {
		return err
	}
	<-lead.Done()
	return nil
}

// The release is followed by another call in the same statement.
func releaseThenCall(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	if err := mu.Unlock(lctx); !errors.Is(err, relock.ErrNotAcquired) {
		return err
	}
	return nil
}

// The error is checked later, still unchanged.
func checkedLater(ctx context.Context, mu *reentrant.Mutex, got chan<- error) {
	lctx, err := mu.Lock(ctx)
	got <- err
	if err == nil {
		err = mu.Unlock(lctx)
	}
	if err != nil {
		got <- err
	}
}

// Once err holds another error, a check of it is no longer about the
// lock call.
func errReused(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx) // want `the function can return at line 330 without mu\.Unlock\(lctx\)`
	if err != nil {
		return err
	}
	err = lctx.Err()
	if err != nil {
		return err
	}
	return mu.Unlock(lctx)
}

// The lock context ends: released or lost.
func untilLost(mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		return err
	}
	<-lctx.Done()
	return context.Cause(lctx)
}

func untilLostOrDone(mu *reentrant.Mutex, done <-chan struct{}) error {
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		return err
	}
	select {
	case <-lctx.Done():
		return context.Cause(lctx)
	case <-done:
		return mu.Unlock(lctx)
	}
}

type holder struct{ ctx context.Context }

func stored(ctx context.Context, mu *reentrant.Mutex) *holder {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return nil
	}
	return &holder{ctx: lctx}
}

func sent(ctx context.Context, mu *reentrant.Mutex, ch chan<- context.Context) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	ch <- lctx
	return nil
}

func declared(ctx context.Context, rw *rwlock.RWMutex, b bool) error {
	var rctx, err = rw.TryRLock(ctx, time.Second) // want `rctx, the context rw\.TryRLock returned, is not unlocked on every path: the function can return at line 383 without rw\.RUnlock\(rctx\)`
	if err != nil {
		return err
	}
	if b {
		return nil
	}
	return rw.RUnlock(rctx)
}
