package redlock_test

import (
	"context"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestHolderListens: each master's client of a RedLock holder listens
// on its notice channel from its first hold on, as every relock holder
// does: that is how a force-unlock reaches it, and how relock doctor
// tells a live holder from a gone one.
func TestHolderListens(t *testing.T) {
	redistest.Parallel(t)
	rcs := clientsOn(t, shared[:3], nil)
	rl := redlock.New(rcs, redistest.Key(t), nil)
	ctx, err := rl.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Unlock(ctx)
	for i, rc := range rcs {
		redistest.AwaitListening(t, shared[i].Client(t), rc)
	}
}
