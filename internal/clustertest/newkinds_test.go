package clustertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestGroupLockOnCluster: for a group on each master, the group's hash
// and its channel live in the group's slot, on that master; two clients
// exclude each other on a shared value; and a release wakes the waiter,
// subscribed there with SSUBSCRIBE, at once rather than when the 30s
// lease it waits for runs out.
func TestGroupLockOnCluster(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	bg := context.Background()
	a, b := newClient(t, c.LockClient(t), nil), newClient(t, c.LockClient(t), nil)
	for master, group := range namesOnEachMaster(t, c, rdb, redistest.Key(t)) {
		t.Run(master, func(t *testing.T) {
			channel := "redisson_lock__channel:{" + group + "}"
			if g, ch := slotOf(t, rdb, group), slotOf(t, rdb, channel); g != ch {
				t.Fatalf("group %s in slot %d, its channel %s in slot %d", group, g, channel, ch)
			}
			node := c.Node(master).Client(t)
			holder := grouplock.New(a, group, []string{"x", "y"}, nil)
			lctx, err := holder.Lock(bg)
			if err != nil {
				t.Fatal(err)
			}
			if n := node.Exists(bg, group).Val(); n != 1 {
				t.Fatalf("the group's hash is not on %s, its slot's master", master)
			}
			other := grouplock.New(b, group, []string{"y", "z"}, nil)
			if _, err := other.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
				t.Fatalf("TryLock of a held value from another client = %v, want ErrNotAcquired", err)
			}
			got := make(chan error, 1)
			ctx, cancel := context.WithTimeout(bg, wait)
			defer cancel()
			go func() {
				octx, err := other.Lock(ctx)
				if err == nil {
					err = other.Unlock(octx)
				}
				got <- err
			}()
			redistest.Eventually(t, wait, "the waiter subscribed on "+master, func() bool {
				return node.PubSubShardNumSub(bg, channel).Val()[channel] == 1
			})
			released := time.Now()
			if err := holder.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("the waiter's Lock after the release: %v", err)
			}
			if d := time.Since(released); d > 5*time.Second {
				t.Fatalf("the waiter got the values %v after the release: not woken", d)
			}
			if n := rdb.Exists(bg, group).Val(); n != 0 {
				t.Fatalf("the group's hash is left: %v", rdb.HGetAll(bg, group).Val())
			}
		})
	}
}
