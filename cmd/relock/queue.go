package main

import (
	"context"
	"fmt"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
)

// forceQueue clears the fair queue of l, a lock nobody holds, through
// the fair lock's ForceUnlock: as a release would, it hands the free lock
// to the first waiter that listens, dropping the gone ones before it,
// and when nobody is handed it, it removes the queue keys (a Redisson
// waiter so woken takes the lock; a live waiter behind queues again at
// its next try). The outcome is read back.
func (e *env) forceQueue(ctx context.Context, l *inspect.Lock) error {
	name := l.Name
	what := fmt.Sprintf("the fair queue of %q (%s; nobody holds the lock)", name, count(len(l.Queue), "waiter"))
	if err := e.approve(fmt.Sprintf("Remove %s? Its first waiter that listens is handed the lock; one that is gone is dropped.", what), "force-unlock of "+what); err != nil {
		return err
	}
	rc, err := e.relockClient()
	if err != nil {
		return err
	}
	defer rc.Close()
	fctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	if _, err := fair.New(rc, name, nil).ForceUnlock(fctx); err != nil {
		return fmt.Errorf("force-unlock of %s: %w (try again; relock inspect %s shows its state)", what, err, name)
	}
	after, err := e.read(ctx, name)
	if err != nil {
		return err
	}
	switch {
	case len(after.Holders) > 0:
		_, err = fmt.Fprintf(e.out, "handed %s to its waiter %s; %s left in its queue\n", name, heldBy(after), count(len(after.Queue), "waiter"))
	case after.Fair:
		_, err = fmt.Fprintf(e.out, "%s has a fair queue again (%s): a waiter queued meanwhile\n", name, count(len(after.Queue), "waiter"))
	default:
		_, err = fmt.Fprintf(e.out, "removed the fair queue of %s (%s); nobody held the lock\n", name, count(len(l.Queue), "waiter"))
	}
	return err
}

// queueKeys shows the TTL t of a fair queue's keys.
func queueKeys(t inspect.TTL) string {
	if t == inspect.NoExpiry {
		return "no expiry (only Redisson wrote the queue since it was made)"
	}
	return t.String() + " (a second past its latest deadline)"
}
