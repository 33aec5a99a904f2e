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
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// forceCmd releases what is held under a name whoever holds it, after
// asking on standard input unless -yes: a lock through its type's
// ForceUnlock, which wakes its waiters (a fair lock's next in line, a
// reentrant lock's waiters, every waiter of a read/write lock) and tells
// its relock holders' clients; an election's leadership through its fair
// lock's; one expirable permit by id (forcePermit).
func forceCmd(ctx context.Context, e *env, args []string) error {
	name := args[0]
	l, err := e.read(ctx, name)
	switch {
	case err != nil:
		return err
	case !l.Exists():
		return notFoundError{name}
	case len(args) == 2 && l.Kind != inspect.KindPermits:
		return usagef("%q is a %s, not an expirable semaphore: a PERMIT-ID goes only with permits", name, kind(l))
	}
	switch l.Kind {
	case inspect.KindLock, inspect.KindRWLock:
	case inspect.KindElection:
		if l.Election.Leader == nil {
			return fmt.Errorf("election %q has no leader: nothing changed", name)
		}
	case inspect.KindPermits:
		if len(args) != 2 {
			return usagef("%q is an expirable semaphore: name the permit to release, relock force-unlock %s PERMIT-ID (see relock inspect %s)", name, name, name)
		}
		return e.forcePermit(ctx, l, args[1])
	case inspect.KindGroup:
		return fmt.Errorf("%q is a group lock, whose values Redis keeps only as hashes: force-unlock it with grouplock's ForceUnlock and its values; nothing changed", name)
	case inspect.KindNone, inspect.KindFencing:
		return fmt.Errorf("lock %q is not held: nothing changed", name)
	default:
		return fmt.Errorf("%q is a %s, which has no owner to force out: nothing changed", name, kind(l))
	}
	if !e.opts.yes {
		ok, err := e.confirm(fmt.Sprintf("Force-unlock %q (%s), held by %s? Its holders lose it at once.", l.Name, kind(l), heldBy(l)))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("force-unlock of %q not confirmed: nothing changed (-yes skips the question)", name)
		}
	}
	released, err := e.forceUnlock(ctx, l)
	switch {
	case err != nil:
		return fmt.Errorf("force-unlock of %q: %w (try again; relock inspect %s shows its state)", name, err, name)
	case !released:
		return fmt.Errorf("lock %q was released before force-unlock reached it: nothing changed", name)
	}
	_, err = fmt.Fprintf(e.out, "force-unlocked %s (%s); it was held by %s\n", name, kind(l), heldBy(l))
	return err
}

// confirm asks on standard error and reads the answer from standard
// input: "y" or "yes" confirms; anything else, or none, does not.
func (e *env) confirm(question string) (bool, error) {
	fmt.Fprintf(e.errs, "%s [y/N] ", question)
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

// heldBy describes a lock's holders, or an election's leader, in a few
// words.
func heldBy(l *inspect.Lock) string {
	if l.Election != nil && l.Election.Leader != nil {
		ld := l.Election.Leader
		return fmt.Sprintf("%s client %s owner %s, term %d", ld.Library, ld.ClientID, ld.Owner, ld.Term)
	}
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
// the lock to the head) and for an election's lock, a reentrant lock's
// otherwise (it wakes Redisson's waiters and hands the lock to relock's
// first registered waiter). The lock type's ForceUnlock tells the
// holders' relock clients (relock_client:{<id>}).
func (e *env) forceUnlock(ctx context.Context, l *inspect.Lock) (bool, error) {
	rc, err := e.relockClient()
	if err != nil {
		return false, err
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	switch {
	case l.Kind == inspect.KindElection:
		return fair.New(rc, layout.ElectionLock(l.Name), nil).ForceUnlock(ctx)
	case l.Kind == inspect.KindRWLock:
		return rwlock.New(rc, l.Name, nil).ForceUnlock(ctx)
	case l.Fair:
		return fair.New(rc, l.Name, nil).ForceUnlock(ctx)
	}
	return reentrant.New(rc, l.Name, nil).ForceUnlock(ctx)
}

// relockClient makes a relock client over the command's connection. On
// a single server or behind Sentinel the client uses global
// pub/sub, as relock and Redisson do there, so creating it asks Redis
// nothing; on a cluster it finds out whether the cluster has sharded
// pub/sub, as relock's and Redisson's clients do.
func (e *env) relockClient() (*relock.Client, error) {
	opts := &relock.Options{Logger: slog.New(slog.DiscardHandler)}
	if !e.cluster {
		opts.PubSub = relock.PubSubGlobal
	}
	return relock.New(e.rdb, opts)
}
