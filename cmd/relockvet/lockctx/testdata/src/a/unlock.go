// Package a holds the analyzer's test cases: unlock.go for releases
// given a context without an owner, discard.go for discarded lock
// contexts, paths.go for lock contexts not released on every path,
// early.go for releases deferred before the error check of their
// acquire.
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

func work(ctx context.Context) error { return nil }

// The habit from other lock APIs: Unlock with what Lock was given.
func unlockWithInput(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(ctx) // want `mu\.Unlock\(ctx\) cannot release the lock: ctx carries no owner; unlock with lctx, the context mu\.Lock returned`
	return work(lctx)
}

func unlockWithLockContext(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	return work(lctx)
}

// A child of the input is no owner either.
func unlockWithInputTimeout(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	tctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	return errors.Join(work(lctx), mu.Unlock(tctx)) // want `mu\.Unlock\(tctx\) cannot release the lock: tctx carries no owner`
}

// A child of the lock context carries its owner.
func unlockWithDerived(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	uctx, cancel := context.WithTimeout(context.WithoutCancel(lctx), time.Second)
	defer cancel()
	defer mu.Unlock(uctx)
	return work(lctx)
}

func unlockWithBackground(mu *reentrant.Mutex) error {
	return mu.Unlock(context.Background()) // want `mu\.Unlock\(context\.Background\(\)\) cannot release the lock: context\.Background\(\) carries no owner; unlock with the context the lock call returned`
}

// A function given a lock context to release.
func release(ctx context.Context, mu *reentrant.Mutex) error {
	return mu.Unlock(ctx)
}

// ctx is given to a lock, but of another mutex.
func releaseOther(ctx context.Context, mu, other *reentrant.Mutex) error {
	lctx, err := other.Lock(ctx)
	if err != nil {
		return err
	}
	defer other.Unlock(lctx)
	return mu.Unlock(ctx)
}

// The lock context replaces the input.
func reassigned(ctx context.Context, mu *reentrant.Mutex) (err error) {
	ctx, err = mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mu.Unlock(ctx)) }()
	return work(ctx)
}

// An owner made by WithNewOwner is in both contexts.
func newOwner(ctx context.Context, mu *reentrant.Mutex) error {
	owner := relock.WithNewOwner(ctx)
	lctx, err := mu.Lock(owner)
	if err != nil {
		return err
	}
	defer mu.Unlock(owner)
	return work(lctx)
}

func readWithInput(ctx context.Context, rw *rwlock.RWMutex) error {
	rctx, err := rw.RLock(ctx)
	if err != nil {
		return err
	}
	defer rw.RUnlock(ctx) // want `rw\.RUnlock\(ctx\) cannot release the lock: ctx carries no owner; unlock with rctx, the context rw\.RLock returned`
	return work(rctx)
}

func lockerWithInput(ctx context.Context, l relock.Locker) error {
	lctx, err := l.TryLock(ctx, time.Second)
	if err != nil {
		return err
	}
	defer l.Unlock(ctx) // want `l\.Unlock\(ctx\) cannot release the lock: ctx carries no owner; unlock with lctx, the context l\.TryLock returned`
	return work(lctx)
}

type worker struct{ mu *reentrant.Mutex }

func (w *worker) run(ctx context.Context) error {
	lctx, err := w.mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer w.mu.Unlock(ctx) // want `w\.mu\.Unlock\(ctx\) cannot release the lock`
	return work(lctx)
}

// Resign finds the leadership through the Election.
func resign(ctx context.Context, e *election.Election) error {
	lead, err := e.Campaign(ctx, "a")
	if err != nil {
		return err
	}
	defer e.Resign(context.Background())
	return work(lead)
}
