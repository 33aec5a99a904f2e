package a

import (
	"context"
	"errors"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
)

// The release is deferred before the error is checked: on failure the
// context or permit is nil.
func earlyUnlock(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	defer mu.Unlock(lctx) // want `defer mu\.Unlock\(lctx\) comes before the check of mu\.Lock's error: when mu\.Lock fails, lctx is nil and the release fails; check err first`
	if err != nil {
		return err
	}
	return work(lctx)
}

func earlyRUnlock(ctx context.Context, rw *rwlock.RWMutex) error {
	rctx, err := rw.TryRLock(ctx, 0)
	defer rw.RUnlock(rctx) // want `defer rw\.RUnlock\(rctx\) comes before the check of rw\.TryRLock's error`
	return errors.Join(err, work(rctx))
}

func earlyLocker(ctx context.Context, l relock.Locker) (err error) {
	var lctx context.Context
	lctx, err = l.Lock(ctx)
	defer func() { _ = l.Unlock(lctx) }() // want `defer l\.Unlock\(lctx\) comes before the check of l\.Lock's error`
	if err != nil {
		return err
	}
	return work(lctx)
}

func earlyPermit(ctx context.Context, ps *permits.Semaphore) error {
	p, err := ps.Acquire(ctx)
	defer p.Release(ctx) // want `defer p\.Release\(ctx\) comes before the check of ps\.Acquire's error: when ps\.Acquire fails, p is nil and the release fails; check err first`
	if err != nil {
		return err
	}
	return work(p.Context())
}

func earlyPermitByID(ctx context.Context, ps *permits.Semaphore) error {
	p, err := ps.TryAcquire(ctx, 0)
	defer ps.Release(ctx, p.ID()) // want `defer ps\.Release\(ctx, p\.ID\(\)\) comes before the check of ps\.TryAcquire's error`
	if err != nil {
		return err
	}
	return work(p.Context())
}

func earlySemaphore(ctx context.Context, sem *semaphore.Semaphore) error {
	err := sem.Acquire(ctx, 1)
	defer sem.Release(ctx, 1) // want `defer sem\.Release\(ctx, 1\) comes before the check of sem\.Acquire's error: when sem\.Acquire fails, the Release gives back permits it never took; check err first`
	if err != nil {
		return err
	}
	return work(ctx)
}

// The error is checked first.
func checkedUnlock(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	return work(lctx)
}

func checkedPermit(ctx context.Context, ps *permits.Semaphore) error {
	p, err := ps.Acquire(ctx)
	if err != nil {
		return err
	}
	defer p.Release(ctx)
	return work(p.Context())
}

func checkedSemaphore(ctx context.Context, sem *semaphore.Semaphore) error {
	if err := sem.Acquire(ctx, 1); err != nil {
		return err
	}
	defer sem.Release(ctx, 1)
	return work(ctx)
}

// A deferred function that looks at the error itself.
func deferredChecks(ctx context.Context, mu *reentrant.Mutex) (err error) {
	lctx, err := mu.Lock(ctx)
	defer func() {
		if err == nil {
			err = mu.Unlock(lctx)
		}
	}()
	if err != nil {
		return err
	}
	return work(lctx)
}

// A defer before the check that releases something else.
func otherDefer(ctx context.Context, mu, other *reentrant.Mutex, octx context.Context) error {
	lctx, err := mu.Lock(ctx)
	defer other.Unlock(octx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	return work(lctx)
}

// Another semaphore's release.
func otherSemaphore(ctx context.Context, sem, other *semaphore.Semaphore) error {
	err := sem.Acquire(ctx, 1)
	defer other.Release(ctx, 1)
	if err != nil {
		return err
	}
	defer sem.Release(ctx, 1)
	return work(ctx)
}
