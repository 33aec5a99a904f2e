package multilock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestUnlockWithoutOwner: an Unlock given the context Lock was given, not
// the one it returned, fails with an error matching ErrNoOwner and
// ErrNotHeld, and releases no member.
func TestUnlockWithoutOwner(t *testing.T) {
	bg := context.Background()
	base := redistest.Key(t)
	ml := members(t, newClients(t, nil), base)
	ctx, err := ml.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Unlock(bg); !errors.Is(err, relock.ErrNoOwner) || !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock with the context given to Lock = %v, want ErrNoOwner and ErrNotHeld", err)
	}
	if h := held(t, base); h != [3]bool{true, true, true} || ctx.Err() != nil {
		t.Fatalf("after the failed Unlock: members held %v, context %v", h, ctx.Err())
	}
	if err := ml.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if h := held(t, base); h != [3]bool{} {
		t.Fatalf("members left after Unlock: %v", h)
	}
}
