package locktest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// unlockWithoutOwner: an Unlock given the context Lock was given, not the
// one it returned ("lctx, err := mu.Lock(ctx); defer mu.Unlock(ctx)"),
// fails with an error matching ErrNoOwner and ErrNotHeld whose text says
// what to do, and changes nothing: the returned context still unlocks.
func unlockWithoutOwner(t *testing.T, e *env) {
	bg := context.Background()
	name := redistest.Key(t)
	mu := e.k.New(e.client(t, nil), name, 0)
	ctx := redistest.Lock(t, mu, bg)
	err := mu.Unlock(bg)
	if !errors.Is(err, relock.ErrNoOwner) || !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock with the context given to Lock = %v, want ErrNoOwner and ErrNotHeld", err)
	}
	if !strings.Contains(err.Error(), "unlock with the context Lock returned") {
		t.Errorf("error %q does not say which context to unlock with", err)
	}
	if ctx.Err() != nil {
		t.Fatal("lock context cancelled by the failed unlock")
	}
	e.assertOnlyHolder(t, mu, ctx)
	redistest.Unlock(t, mu, ctx)
	if locked, err := mu.IsLocked(bg); err != nil || locked {
		t.Fatalf("IsLocked after Unlock = %v, %v", locked, err)
	}
}
