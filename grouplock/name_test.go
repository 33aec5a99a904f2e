package grouplock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/observe"
)

// names records the lock names the Observer is told.
type names struct {
	observe.Base
	mu   sync.Mutex
	seen []string
}

func (n *names) add(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seen = append(n.seen, name)
}

func (n *names) StartAcquire(ctx context.Context, l observe.Lock, _ observe.Op) (context.Context, func(observe.Acquire)) {
	n.add(l.Name)
	return ctx, nil
}

func (n *names) StartUnlock(ctx context.Context, l observe.Lock, _ observe.Op) (context.Context, func(error)) {
	n.add(l.Name)
	return ctx, nil
}

func (n *names) HoldEnded(h observe.HoldEnd) { n.add(h.Lock.Name) }

// TestOneName: Name, the errors and the Observer all name the group as
// the user gave it, which is its Redis key.
func TestOneName(t *testing.T) {
	obs := &names{}
	rc := newClient(t, &relock.Options{Observer: obs})
	group := redistest.Key(t)
	mu := grouplock.New(rc, group, []string{"a", "b"}, nil)
	if mu.Name() != group {
		t.Errorf("Name() = %q, want %q", mu.Name(), group)
	}
	lctx := redistest.Lock(t, mu, bg)
	other := grouplock.New(rc, group, []string{"b", "c"}, nil)
	_, tryErr := other.TryLock(relock.WithNewOwner(bg), 10*time.Millisecond)
	if !errors.Is(tryErr, relock.ErrNotAcquired) {
		t.Fatalf("TryLock of a held value: %v, want relock.ErrNotAcquired", tryErr)
	}
	redistest.Unlock(t, mu, lctx)
	unlockErr := mu.Unlock(lctx)
	if !errors.Is(unlockErr, relock.ErrNotHeld) {
		t.Fatalf("second Unlock: %v, want relock.ErrNotHeld", unlockErr)
	}
	want := strconv.Quote(group)
	for _, err := range []error{tryErr, unlockErr} {
		if msg := err.Error(); !strings.Contains(msg, want) || strings.Contains(msg, "\x00") {
			t.Errorf("error %q, want it to name the group as %s", msg, want)
		}
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if len(obs.seen) == 0 {
		t.Fatal("the Observer was told nothing")
	}
	for _, name := range obs.seen {
		if name != group {
			t.Errorf("the Observer was told of %q, want %q", name, group)
		}
	}
}
