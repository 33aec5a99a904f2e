package a

import (
	"context"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

func discardAssign(ctx context.Context, mu *reentrant.Mutex) error {
	_, err := mu.Lock(ctx) // want `the context mu\.Lock returns carries the hold's owner: keep it and unlock with it`
	return err
}

func discardStmt(ctx context.Context, mu *reentrant.Mutex) {
	mu.Lock(ctx) // want `the context mu\.Lock returns carries the hold's owner`
}

func discardTry(mu *reentrant.Mutex) error {
	_, err := mu.TryLock(context.Background(), 0) // want `the context mu\.TryLock returns carries the hold's owner`
	return err
}

func discardRead(ctx context.Context, rw *rwlock.RWMutex) {
	var _, _ = rw.TryRLock(ctx, 0) // want `the context rw\.TryRLock returns carries the hold's owner`
}

func discardLocker(ctx context.Context, l relock.Locker) {
	go l.Lock(ctx) // want `the context l\.Lock returns carries the hold's owner`
}

func discardCampaign(ctx context.Context, e *election.Election) error {
	_, err := e.Campaign(ctx, "a") // want `the context e\.Campaign returns ends with the leadership and carries its term: keep it and lead under it`
	return err
}

// The argument carries the owner too.
func discardWithOwner(ctx context.Context, mu *reentrant.Mutex) error {
	owner := relock.WithNewOwner(ctx)
	if _, err := mu.Lock(owner); err != nil {
		return err
	}
	return mu.Unlock(owner)
}

// A re-entry with the lock context.
func discardReentry(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	if _, err := mu.Lock(lctx); err != nil {
		return err
	}
	return mu.Unlock(lctx)
}

// Results that go elsewhere are not discarded.
func returnLock(ctx context.Context, mu *reentrant.Mutex) (context.Context, error) {
	return mu.Lock(ctx)
}

func discardTryCampaign(ctx context.Context, e *election.Election) {
	e.TryCampaign(ctx, "a", 0) // want `the context e\.TryCampaign returns ends with the leadership`
}
