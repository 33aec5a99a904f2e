package a

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// Workers of an errgroup on the lock context re-enter the parent's hold.
func sharedErrgroup(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	g, gctx := errgroup.WithContext(lctx)
	for range 3 {
		g.Go(func() error {
			wctx, err := mu.Lock(gctx) // want `mu\.Lock\(gctx\) in a goroutine re-enters the hold mu\.Lock took at line 15: gctx carries its owner, so the goroutine does not wait, and it excludes neither its parent nor the other goroutines; lock with relock\.WithNewOwner\(gctx\) for work that must wait for them`
			if err != nil {
				return err
			}
			defer mu.Unlock(wctx)
			return work(wctx)
		})
	}
	return g.Wait()
}

// So does a go statement given the lock context, or a child of it.
func sharedGo(ctx context.Context, mu *reentrant.Mutex) {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return
	}
	defer mu.Unlock(lctx)
	go func(ctx context.Context) {
		tctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if wctx, err := mu.TryLock(tctx, 0); err == nil { // want `mu\.TryLock\(tctx\) in a goroutine re-enters the hold mu\.Lock took at line 36`
			mu.Unlock(wctx)
		}
	}(lctx)
}

// And a sync.WaitGroup's worker capturing it.
func sharedWaitGroup(ctx context.Context, mu *reentrant.Mutex) {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return
	}
	defer mu.Unlock(lctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if wctx, err := mu.Lock(lctx); err == nil { // want `mu\.Lock\(lctx\) in a goroutine re-enters the hold mu\.Lock took at line 52`
			mu.Unlock(wctx)
		}
	})
	wg.Wait()
}

// A worker given a fresh owner waits for the parent: the fix.
func newOwnerWorkers(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	g, gctx := errgroup.WithContext(lctx)
	g.Go(func() error {
		wctx, err := mu.Lock(relock.WithNewOwner(gctx))
		if err != nil {
			return err
		}
		return mu.Unlock(wctx)
	})
	return g.Wait()
}

// The documented call chain: a function called with the lock context
// re-enters on the same goroutine.
func callChain(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	return reenter(lctx, mu)
}

func reenter(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	return mu.Unlock(lctx)
}

// A goroutine that shares the hold but takes no lock, or locks another
// mutex, or locks with a context of its own, is left alone.
func otherLocks(ctx context.Context, mu, other *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	g, gctx := errgroup.WithContext(lctx)
	g.Go(func() error { return work(gctx) })
	g.Go(func() error {
		octx, err := other.Lock(gctx)
		if err != nil {
			return err
		}
		return other.Unlock(octx)
	})
	g.Go(func() error {
		wctx, err := mu.Lock(ctx)
		if err != nil {
			return err
		}
		return mu.Unlock(wctx)
	})
	return g.Wait()
}

// A goroutine that locks first and starts its own workers after is
// judged by where the lock context comes from: here, from inside.
func lockInside(ctx context.Context, mu *reentrant.Mutex) {
	go func() {
		lctx, err := mu.Lock(ctx)
		if err != nil {
			return
		}
		defer mu.Unlock(lctx)
		_ = work(lctx)
	}()
}

// A context that may or may not carry the owner is not reported.
func maybeShared(ctx context.Context, mu *reentrant.Mutex, fresh bool) {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return
	}
	defer mu.Unlock(lctx)
	wctx := lctx
	if fresh {
		wctx = relock.WithNewOwner(ctx)
	}
	go func() {
		if c, err := mu.TryLock(wctx, 0); err == nil {
			mu.Unlock(c)
		}
	}()
}

// Every value of gctx carries the owner: two groups in turn.
func sharedTwice(ctx context.Context, mu *reentrant.Mutex) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	g, gctx := errgroup.WithContext(lctx)
	g.Go(func() error { return work(gctx) })
	if err := g.Wait(); err != nil {
		return err
	}
	g, gctx = errgroup.WithContext(lctx)
	g.Go(func() error {
		wctx, err := mu.Lock(gctx) // want `mu\.Lock\(gctx\) in a goroutine re-enters the hold mu\.Lock took at line 163`
		if err != nil {
			return err
		}
		return mu.Unlock(wctx)
	})
	return g.Wait()
}
