package clustertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestDeadlineOnSilentMaster: an acquire sent to a master that stopped
// answering returns by its context's deadline, though relock has the
// cluster's layout reloaded after it (a failover may be under way), and
// once the master answers again the lock is free within the lease: the
// acquire's undo runs in the background. The master is paused for less
// than the cluster's node timeout, so no failover starts.
func TestDeadlineOnSilentMaster(t *testing.T) {
	c := needCluster(t)
	const (
		deadline = 300 * time.Millisecond
		// margin is far above relock's own slack (core.Grace) and far
		// below the layout wait (1s) a call once spent past its deadline.
		margin = 500 * time.Millisecond
		lease  = 2 * time.Second
	)
	for _, k := range []struct {
		name string
		new  func(rc *relock.Client, name string) relock.Locker
	}{
		{"reentrant", func(rc *relock.Client, name string) relock.Locker { return reentrant.New(rc, name, nil) }},
		{"fair", func(rc *relock.Client, name string) relock.Locker { return fair.New(rc, name, nil) }},
	} {
		for _, sync := range []struct {
			name     string
			replicas int
		}{{"sync", relock.SyncAuto}, {"nosync", relock.SyncOff}} {
			t.Run(k.name+"/"+sync.name, func(t *testing.T) {
				bg := context.Background()
				rdb := c.LockClient(t)
				rc := newClient(t, rdb, &relock.Options{WatchdogTimeout: lease, SyncReplicas: sync.replicas})
				name := redistest.Key(t)
				mu := k.new(rc, name)
				// A first hold loads the scripts and the layout, and opens
				// the connection to the master.
				lctx, err := mu.Lock(bg)
				if err != nil {
					t.Fatal(err)
				}
				if err := mu.Unlock(lctx); err != nil {
					t.Fatal(err)
				}

				node := c.Node(masterOf(t, rdb, name))
				if err := node.Pause(); err != nil {
					t.Fatal(err)
				}
				resumed := false
				resume := func() {
					if !resumed {
						resumed = true
						if err := node.Resume(); err != nil {
							t.Error(err)
						}
					}
				}
				t.Cleanup(func() { resume(); healthy(t, c) })
				ctx, cancel := context.WithTimeout(bg, deadline)
				defer cancel()
				start := time.Now()
				_, err = mu.Lock(ctx)
				took := time.Since(start)
				resume()
				if !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("Lock on a paused master = %v, want ErrNotAcquired and DeadlineExceeded", err)
				}
				t.Logf("Lock on a paused master returned %v after its %v deadline", took-deadline, deadline)
				if took > deadline+margin {
					t.Fatalf("Lock on a paused master took %v, deadline %v", took, deadline)
				}

				other := k.new(newClient(t, c.LockClient(t), nil), name)
				var octx context.Context
				if !within(lease+wait, func() bool {
					octx, err = other.TryLock(bg, 0)
					return err == nil
				}) {
					t.Fatalf("lock not free within the lease once the master answered: %v", err)
				}
				if err := other.Unlock(octx); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
