package semaphore

import (
	"context"
	"fmt"

	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/scripts"
)

// An attempt is one Acquire or TryAcquire call, as the wait loop
// (internal/wait) sees it. Its waiter listens on the semaphore's channel,
// where every increase of the count is published and wakes the waiters
// of each client that the count covers (pubsub.WakeCount), each counting
// the permits it wants (its tag).
type attempt struct {
	s   *Semaphore
	ctx context.Context
	n   any // the permits wanted, boxed once for every attempt
}

// Attempt runs the acquire script once, on its own context
// (core.Client.Outlive): a caller that gives up mid-call gets its time
// back, and permits the call took after that are given back. Permits not available leave nothing in Redis, whether the
// waiter listens yet or not, and nothing bounds the sleep but a wake-up:
// an expiring key (Options.TTL) takes permits away, never adds them.
//
// With replica sync (relock.Options.SyncReplicas) the attempt waits for
// the master's replicas, as lock acquires do; permits taken on a master
// whose replicas did not confirm them are given back (and published, for
// anyone who waited meanwhile), and the attempt fails with an error
// matching relock.ErrNotAcquired, as Redisson's tryAcquire does.
func (a *attempt) Attempt(bool) (wait.Outcome, error) {
	c := a.s.c
	reply, err := c.Outlive(a.ctx, func(ctx context.Context) (any, error) {
		return c.EvalAcquire(ctx, took, scripts.SemaphoreAcquire, a.s.keys[:1], a.n)
	}, func(ctx context.Context, reply any, _ error) {
		// The caller left before the reply came: permits it took go
		// back.
		if took(reply) {
			_, _ = a.s.release(ctx, a.n)
		}
	})
	switch {
	case err != nil && took(reply):
		ctx, cancel := c.CleanupContext(a.ctx)
		defer cancel()
		if _, rerr := a.s.release(ctx, a.n); rerr != nil {
			err = fmt.Errorf("%w (returning the permits failed: %v)", err, rerr)
		}
		return wait.Outcome{}, err
	case err != nil:
		return wait.Outcome{}, err
	case took(reply):
		return wait.Outcome{Acquired: true}, nil
	}
	return wait.Outcome{TTL: -1}, nil
}

// Handoff is never called: no release hands permits to a waiter, so the
// semaphore's wake-ups carry no notes (wait.Spec.Handoffs is false).
func (a *attempt) Handoff(string) (bool, error) { return false, nil }

// GiveUp is never called: a failed attempt leaves nothing to undo
// (wait.Spec.GivesUp is false).
func (a *attempt) GiveUp() error { return nil }

// took reports the acquire script's reply 1: the permits were taken.
func took(reply any) bool { return reply == int64(1) }
