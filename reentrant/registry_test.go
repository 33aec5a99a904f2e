package reentrant_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestRegistryBoundWithoutTTL: a waiter on a lock whose record has no
// TTL (another program wrote it so) registers in relock's waiter
// registry with a TTL of the registry's own, not a PERSISTed one, and
// keeps registering while it waits; the holder's release still wakes it.
func TestRegistryBoundWithoutTTL(t *testing.T) {
	srv.RequireReal(t)
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	registry := "relock_lock_waiters:{" + name + "}"
	raw.HSet(bg, name, uuid.NewString()+":1", 1)
	mu := reentrant.New(newClient(t, nil), name, nil)
	got := make(chan error, 1)
	go func() {
		ctx, err := mu.TryLock(bg, 10*time.Second)
		if err == nil {
			err = mu.Unlock(ctx)
		}
		got <- err
	}()
	for i := 0; raw.Exists(bg, registry).Val() == 0; i++ {
		if i == 200 {
			t.Fatal("the waiter never registered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if ttl := raw.PTTL(bg, registry).Val(); ttl <= 0 || ttl > 5*time.Second {
		t.Errorf("registry's TTL %v on a lock without one, want (0, 5s]", ttl)
	}
	time.Sleep(3500 * time.Millisecond)
	if ttl := raw.PTTL(bg, registry).Val(); ttl < 2*time.Second {
		t.Errorf("registry's TTL %v 3.5s into the wait: the waiter does not register again", ttl)
	}
	raw.Del(bg, name)
	raw.Publish(bg, channelOf(name), "0")
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not in 5s after the holder's release")
	}
}
