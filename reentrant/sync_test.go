package reentrant_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/reentrant"
)

// replicated starts a master and one replica of it, both the test's own,
// and waits until the replica is in sync.
func replicated(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	master = redistest.Start(t)
	master.RequireReal(t)
	_, port, _ := strings.Cut(master.Addr, ":")
	replica = redistest.Start(t, "--replicaof", "127.0.0.1", port)
	raw, mraw := replica.Client(t), master.Client(t)
	deadline := time.Now().Add(10 * time.Second)
	// Both ends must agree: the master counts a replica for WAIT only once
	// it sees the link online, which can come after the replica's "up".
	for !strings.Contains(raw.Info(context.Background(), "replication").Val(), "master_link_status:up") ||
		!strings.Contains(mraw.Info(context.Background(), "replication").Val(), "state=online") {
		if time.Now().After(deadline) {
			t.Fatal("replica not in sync within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return master, replica
}

// TestSyncReplicas: with SyncReplicas an acquire returns only once the
// replica has it; when the replicas cannot confirm in time the acquire
// is undone and reported as ErrNotAcquired.
func TestSyncReplicas(t *testing.T) {
	master, replica := replicated(t)
	bg := context.Background()
	name := redistest.Key(t)
	opts := &relock.Options{SyncReplicas: 1, SyncTimeout: 300 * time.Millisecond}
	rc, err := relock.New(master.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	mu := reentrant.New(rc, name, &reentrant.Options{Fencing: true})
	ctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	// WAIT returned, so the replica has the hold already.
	if fields := replica.Client(t).HGetAll(bg, name).Val(); len(fields) != 1 {
		t.Fatalf("replica's copy right after Lock: %v", fields)
	}
	if err := mu.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// Two replicas asked for, one exists.
	two, err := relock.New(master.Client(t), &relock.Options{SyncReplicas: 2, SyncTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	start := time.Now()
	_, err = reentrant.New(two, name, nil).Lock(bg)
	if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "1 of 2 replicas") {
		t.Fatalf("Lock with too few replicas = %v, want ErrNotAcquired (1 of 2 replicas)", err)
	}
	t.Logf("refused after %v: %v", time.Since(start), err)
	if master.Client(t).Exists(bg, name).Val() != 0 {
		t.Fatal("refused acquire left its hold on the master")
	}

	// The replica stops answering.
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer replica.Resume()
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with the replica frozen = %v, want ErrNotAcquired", err)
	}
	if master.Client(t).Exists(bg, name).Val() != 0 {
		t.Fatal("refused acquire left its hold on the master")
	}
}

// TestSyncOptions: bad replica options are refused.
func TestSyncOptions(t *testing.T) {
	rdb := srv.Client(t)
	for what, o := range map[string]*relock.Options{
		"negative replicas":        {SyncReplicas: -1},
		"negative timeout":         {SyncReplicas: 1, SyncTimeout: -time.Second},
		"fractional milliseconds":  {SyncReplicas: 1, SyncTimeout: 1500 * time.Microsecond},
		"timeout past ReadTimeout": {SyncReplicas: 1, SyncTimeout: time.Minute},
	} {
		if _, err := relock.New(rdb, o); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("%s: New = %v, want ErrInvalidArgument", what, err)
		}
	}
}
