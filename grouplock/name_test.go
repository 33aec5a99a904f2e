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

// startNames records the lock names of the acquires, unlocks and hold
// ends an Observer is told of.
type startNames struct {
	observe.Base
	mu    sync.Mutex // guards names and ended
	names []string
	ended []string
}

func (o *startNames) HoldEnded(e observe.HoldEnd) {
	if e.Lock.Kind != "grouplock" {
		return
	}
	o.mu.Lock()
	o.ended = append(o.ended, e.Lock.Name)
	o.mu.Unlock()
}

func (o *startNames) record(l observe.Lock) {
	if l.Kind != "grouplock" {
		return
	}
	o.mu.Lock()
	o.names = append(o.names, l.Name)
	o.mu.Unlock()
}

func (o *startNames) StartAcquire(ctx context.Context, l observe.Lock, _ observe.Op) (context.Context, func(observe.Acquire)) {
	o.record(l)
	return ctx, nil
}

func (o *startNames) StartUnlock(ctx context.Context, l observe.Lock, _ observe.Op) (context.Context, func(error)) {
	o.record(l)
	return ctx, nil
}

// TestOneName: a Mutex's errors and its Observer acquire, unlock and
// hold-end events name the lock as Name does, the group, not the name
// the client keeps the set's holds under ("<group>[<hash>]").
func TestOneName(t *testing.T) {
	obs := &startNames{}
	rc := newClient(t, &relock.Options{Observer: obs})
	group := redistest.Key(t)
	mu := grouplock.New(rc, group, []string{"a", "b"}, nil)
	if mu.Name() != group {
		t.Fatalf("Name() = %q, want %q", mu.Name(), group)
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

	quoted := strconv.Quote(group)
	for _, err := range []error{tryErr, unlockErr} {
		if msg := err.Error(); !strings.Contains(msg, quoted) || strings.Contains(msg, group+"[") {
			t.Errorf("error %q: want it to name the group as %s, and no set", msg, quoted)
		}
	}

	obs.mu.Lock()
	defer obs.mu.Unlock()
	// Lock, TryLock, Unlock and Unlock again.
	if len(obs.names) != 4 {
		t.Errorf("the Observer was told of %d acquires and unlocks, want 4: %q", len(obs.names), obs.names)
	}
	for _, name := range obs.names {
		if name != group {
			t.Errorf("the Observer was told of %q, want %q", name, group)
		}
	}
	if len(obs.ended) != 1 || obs.ended[0] != group {
		t.Errorf("the Observer was told of hold ends on %q, want one on %q", obs.ended, group)
	}
}
