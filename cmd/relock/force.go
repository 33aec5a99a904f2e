package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// forceCmd deletes a lock whoever holds it, through its lock type's
// ForceUnlock, which wakes its waiters (a fair lock's next in line, a
// reentrant lock's waiters, every waiter of a read/write lock) and tells
// its relock holders' clients, after asking on standard input unless
// -yes.
func forceCmd(ctx context.Context, e *env, args []string) error {
	name := args[0]
	l, err := e.read(ctx, name)
	switch {
	case err != nil:
		return err
	case !l.Exists():
		return fmt.Errorf("no lock named %q", name)
	case l.Kind == inspect.KindOther:
		return fmt.Errorf("%q is a Redis %s, not a lock: nothing changed", name, l.Type)
	case l.Kind == inspect.KindNone:
		return fmt.Errorf("lock %q is not held: nothing changed", name)
	}
	if !e.opts.yes {
		ok, err := e.confirm(l)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("force-unlock of %q not confirmed: nothing changed", name)
		}
	}
	released, err := e.forceUnlock(ctx, l)
	switch {
	case err != nil:
		return fmt.Errorf("force-unlock of %q: %w", name, err)
	case !released:
		return fmt.Errorf("lock %q was released before force-unlock reached it", name)
	}
	_, err = fmt.Fprintf(e.out, "force-unlocked %s (%s); it was held by %s\n", name, kind(l), heldBy(l))
	return err
}

// confirm asks on standard error and reads the answer from standard
// input: "y" or "yes" confirms; anything else, or none, does not.
func (e *env) confirm(l *inspect.Lock) (bool, error) {
	fmt.Fprintf(e.errs, "Force-unlock %q (%s), held by %s? Its holders lose it at once. [y/N] ", l.Name, kind(l), heldBy(l))
	answer, err := bufio.NewReader(e.in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading the confirmation: %w", err)
	}
	if f, ok := e.in.(*os.File); !ok || !terminal(f) {
		fmt.Fprintln(e.errs) // the answer was not echoed
	}
	a := strings.ToLower(strings.TrimSpace(answer))
	return a == "y" || a == "yes", nil
}

// heldBy describes a lock's holders in a few words.
func heldBy(l *inspect.Lock) string {
	switch len(l.Holders) {
	case 0:
		return "nobody"
	case 1:
		h := l.Holders[0]
		holds := "holds"
		if h.Holds == 1 {
			holds = "hold"
		}
		return fmt.Sprintf("%s client %s owner %s, %d %s", h.Library, h.ClientID, h.Owner, h.Holds, holds)
	}
	return fmt.Sprintf("%d owners", len(l.Holders))
}

// forceUnlock runs the ForceUnlock of l's lock type through a relock
// client over the command's connection: a read/write lock's for a
// record with a mode, a fair lock's when its queue keys exist (it hands
// the lock to the head), a reentrant lock's otherwise (it wakes
// Redisson's waiters and hands the lock to relock's first registered
// waiter). On a single server or behind Sentinel the client uses global
// pub/sub, as relock and Redisson do there, so creating it asks Redis
// nothing; on a cluster it finds out whether the cluster has sharded
// pub/sub, as relock's and Redisson's clients do.
func (e *env) forceUnlock(ctx context.Context, l *inspect.Lock) (bool, error) {
	opts := &relock.Options{Logger: slog.New(slog.DiscardHandler)}
	if !e.cluster {
		opts.PubSub = relock.PubSubGlobal
	}
	rc, err := relock.New(e.rdb, opts)
	if err != nil {
		return false, err
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	switch {
	case l.Kind == inspect.KindRWLock:
		return rwlock.New(rc, l.Name, nil).ForceUnlock(ctx)
	case l.Fair:
		return fair.New(rc, l.Name, nil).ForceUnlock(ctx)
	}
	return reentrant.New(rc, l.Name, nil).ForceUnlock(ctx)
}
