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
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// forceCmd releases what is held under a name whoever holds it, after
// asking on standard input unless -yes: a lock through its type's
// ForceUnlock, which wakes its waiters (a fair lock's next in line, a
// reentrant lock's waiters, every waiter of a read/write lock or a group
// lock) and tells its relock holders' clients; an election's leadership
// through its fair lock's; a group lock's values, named by the
// operator, through grouplock's (forceGroup); one expirable permit by id
// (forcePermit); a fair queue nobody holds the lock of (forceQueue).
func forceCmd(ctx context.Context, e *env, args []string) error {
	name := args[0]
	l, err := e.read(ctx, name)
	switch {
	case err != nil:
		return err
	case !l.Exists():
		return notFoundError{name}
	case l.Kind == inspect.KindGroup:
		return e.forceGroup(ctx, l, args[1:])
	case len(args) > 2 || len(args) == 2 && l.Kind != inspect.KindCount:
		return usagef("%q is %s, not an expirable semaphore's count or a group lock: a PERMIT-ID goes only with an expirable semaphore, VALUEs only with a group lock", name, describe(l))
	}
	switch l.Kind {
	case inspect.KindLock, inspect.KindRWLock:
		if len(l.Holders) == 0 && l.Fair {
			return e.forceQueue(ctx, l)
		}
	case inspect.KindElection:
		if l.Election.Leader == nil {
			return fmt.Errorf("election %q has no leader: nothing changed", name)
		}
	case inspect.KindCount:
		switch {
		case len(args) == 2:
			return e.forcePermit(ctx, l, args[1])
		case l.Use == inspect.KindPermits:
			return usagef("%q is an expirable semaphore: name the permit to release, relock force-unlock %s PERMIT-ID (see relock inspect %s)", name, name, name)
		}
		return fmt.Errorf("%q is %s, which has no owner to force out: nothing changed", name, describe(l))
	case inspect.KindNone:
		return fmt.Errorf("lock %q is not held: nothing changed", name)
	case inspect.KindFencing, inspect.KindFence:
		return fmt.Errorf("%q is %s, not a lock: nothing is held, nothing changed", name, describe(l))
	default:
		return fmt.Errorf("%q is %s, which has no owner to force out: nothing changed", name, describe(l))
	}
	if err := e.approve(fmt.Sprintf("Force-unlock %q (%s), held by %s? Its holders lose it at once.", l.Name, kind(l), heldBy(l)), fmt.Sprintf("force-unlock of %q", name)); err != nil {
		return err
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

// forceGroup frees the given values of the group lock l whoever holds
// them, through grouplock's ForceUnlock over a Mutex of those values,
// which wakes the group's waiters and tells the holders' relock clients:
// at once those holding this very set, the others at their next renewal.
// Redis keeps the values only as hashes, so the operator names them, and
// -codec says how the group's clients hash them.
func (e *env) forceGroup(ctx context.Context, l *inspect.Lock, values []string) error {
	name := l.Name
	if len(values) == 0 {
		return usagef("%q is a group lock, whose values Redis keeps only as hashes: name the values to free, relock force-unlock %s VALUE... (relock inspect %s VALUE... shows which are held)", name, name, name)
	}
	seen := make(map[string]bool, len(values))
	for _, v := range values {
		if v == "" || seen[v] {
			return usagef("VALUEs must be distinct and not empty: %q", values)
		}
		seen[v] = true
	}
	notHeld := l.NameValues(e.opts.groupCodec, values)
	if len(notHeld) == len(values) {
		return fmt.Errorf("group lock %q holds none of %s (hashed as %s; relock inspect %s shows the hashes held): nothing changed", name, strings.Join(values, ", "), e.opts.groupCodec, name)
	}
	what := fmt.Sprintf("%s of group lock %q", strings.Join(values, ", "), name)
	if err := e.approve(fmt.Sprintf("Force-unlock %s, held by %s? Their holders lose them at once.", what, valueHolders(l)), "force-unlock of "+what); err != nil {
		return err
	}
	rc, err := e.relockClient()
	if err != nil {
		return err
	}
	defer rc.Close()
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	released, err := grouplock.New(rc, name, values, &grouplock.Options{Codec: e.opts.groupCodec}).ForceUnlock(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("force-unlock of %s: %w (try again; relock inspect %s shows its state)", what, err, name)
	case !released:
		return fmt.Errorf("%s were released before force-unlock reached them: nothing changed", what)
	}
	if len(notHeld) > 0 {
		what += " (" + strings.Join(notHeld, ", ") + " not held)"
	}
	_, err = fmt.Fprintf(e.out, "force-unlocked %s; they were held by %s\n", what, valueHolders(l))
	return err
}

// valueHolders describes the holders of a group lock's named values
// (Lock.NameValues), each with the values it holds.
func valueHolders(l *inspect.Lock) string {
	var s []string
	for _, h := range l.Holders {
		var vs []string
		for _, v := range h.ValueNames {
			if v != "" {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			s = append(s, fmt.Sprintf("%s client %s owner %s (%s)", h.Library, h.ClientID, h.Owner, strings.Join(vs, ", ")))
		}
	}
	return strings.Join(s, "; ")
}

// approve asks question unless -yes was given, and returns an error
// saying that action changed nothing when the answer is no.
func (e *env) approve(question, action string) error {
	if e.opts.yes {
		return nil
	}
	ok, err := e.confirm(question)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s not confirmed: nothing changed (-yes skips the question)", action)
	}
	return nil
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
