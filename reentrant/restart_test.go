package reentrant_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestWaiterSurvivesRestart: a redis-server restart (empty) while a
// waiter waits on a lock with a 30s lease: the waiter keeps waiting
// through the outage and takes the lock soon after the server is back,
// without sleeping out the lease.
func TestWaiterSurvivesRestart(t *testing.T) {
	s := redistest.Start(t)
	s.RequireReal(t)
	name := redistest.Key(t)
	holder := reentrant.New(newClientOn(t, s), name, nil)
	if _, err := holder.Lock(context.Background()); err != nil {
		t.Fatal(err)
	}
	wrc := newClientOn(t, s)
	waiter := reentrant.New(wrc, name, nil)
	got := make(chan error, 1)
	go func() {
		ctx, err := waiter.Lock(context.Background())
		if err == nil {
			err = waiter.Unlock(ctx)
		}
		got <- err
	}()
	raw := s.Client(t)
	deadline := time.Now().Add(5 * time.Second)
	// The waiter listens on its client's channel.
	ch := channelOf(name) + ":" + wrc.ID()
	for raw.PubSubNumSub(context.Background(), ch).Val()[ch] != 1 {
		if time.Now().After(deadline) {
			t.Fatal("waiter not subscribed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Kill()
	time.Sleep(500 * time.Millisecond) // an outage the waiter must ride out
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter after the restart: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiter did not take the lock after the restart")
	}
	t.Logf("waiter took the lock %v after the server came back (lease 30s)", time.Since(back))
	if took := time.Since(back); took > 5*time.Second {
		t.Fatalf("waiter took %v after the restart", took)
	}
}
