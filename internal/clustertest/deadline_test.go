package clustertest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
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
	for kind, k := range map[string]locktest.Kind{"reentrant": locktest.Reentrant, "fair": locktest.Fair} {
		for _, mode := range []struct {
			name     string
			replicas int
		}{{"sync", relock.SyncAuto}, {"nosync", relock.SyncOff}} {
			t.Run(kind+"/"+mode.name, func(t *testing.T) {
				bg := context.Background()
				rdb := c.LockClient(t)
				rc := newClient(t, rdb, &relock.Options{WatchdogTimeout: lease, SyncReplicas: mode.replicas})
				name := redistest.Key(t)
				mu := k.New(rc, name, 0)
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
				resume := sync.OnceFunc(func() {
					if err := node.Resume(); err != nil {
						t.Error(err)
					}
				})
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

				other := k.New(newClient(t, c.LockClient(t), nil), name, 0)
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
