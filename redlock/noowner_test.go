package redlock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestUnlockWithoutOwner: an Unlock given the context Lock was given, not
// the one it returned, fails with an error matching ErrNoOwner and
// ErrNotHeld, and releases no master's record.
func TestUnlockWithoutOwner(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	servers := startServers(t, 3)
	name := redistest.Key(t)
	rl := redlock.New(clientsOn(t, servers, nil), name, nil)
	ctx, err := rl.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := rl.Unlock(bg); !errors.Is(err, relock.ErrNoOwner) || !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock with the context given to Lock = %v, want ErrNoOwner and ErrNotHeld", err)
	}
	if n := records(t, servers, name); n != 3 || ctx.Err() != nil {
		t.Fatalf("after the failed Unlock: records on %d masters, context %v", n, ctx.Err())
	}
	if err := rl.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := records(t, servers, name); n != 0 {
		t.Fatalf("records left on %d masters after Unlock", n)
	}
}
