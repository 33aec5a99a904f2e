package clustertest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestRedLockWithClusterInstance: a RedLock may count a whole cluster as
// one of its independent instances, beside two single servers. With its
// names on each master, as the limited ACL user: the lock takes a record
// on all three, excludes a contender, is renewed on the cluster by the
// watchdog, still reaches its quorum with a single server dead, and
// leaves nothing behind.
func TestRedLockWithClusterInstance(t *testing.T) {
	c := needCluster(t)
	bg := context.Background()
	servers := []*redistest.Server{redistest.Start(t), redistest.Start(t)}
	for _, s := range servers {
		s.RequireReal(t)
	}
	opts := &relock.Options{WatchdogTimeout: 600 * time.Millisecond}
	instances := func() []*relock.Client {
		return []*relock.Client{
			newClient(t, c.LockClient(t), opts),
			newClient(t, servers[0].Client(t), opts),
			newClient(t, servers[1].Client(t), opts),
		}
	}
	holders, contenders := instances(), instances()
	rdb := c.Client(t)
	records := func(name string) (n int) {
		if rdb.Exists(bg, name).Val() == 1 {
			n++
		}
		for _, s := range servers {
			if s.Client(t).Exists(bg, name).Val() == 1 {
				n++
			}
		}
		return n
	}
	redLock := func(rcs []*relock.Client, name string) *redlock.RedLock {
		rl := redlock.New(rcs, name, nil)
		return rl
	}
	names := namesOnEachMaster(t, c, rdb, redistest.Key(t))
	for master, name := range names {
		rl := redLock(holders, name)
		ctx, err := rl.Lock(bg)
		if err != nil {
			t.Fatalf("Lock on %s: %v", master, err)
		}
		if n := records(name); n != 3 {
			t.Fatalf("%s: record on %d instances, want 3", master, n)
		}
		if _, err := redLock(contenders, name).TryLock(bg, 200*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("contender's TryLock on %s = %v, want ErrNotAcquired", master, err)
		}
		time.Sleep(1500 * time.Millisecond) // two and a half 600ms leases
		if ctx.Err() != nil || rdb.PTTL(bg, name).Val() <= 0 {
			t.Fatalf("%s: lease not renewed on the cluster (context %v, PTTL %v)", master, context.Cause(ctx), rdb.PTTL(bg, name).Val())
		}
		if err := rl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if n := records(name); n != 0 {
			t.Fatalf("%s: record left on %d instances", master, n)
		}
	}

	servers[1].Kill()
	for master, name := range names {
		rl := redLock(holders, name)
		ctx, err := rl.Lock(bg)
		if err != nil {
			t.Fatalf("Lock on %s with a server dead: %v", master, err)
		}
		if n := records(name); n != 2 {
			t.Fatalf("%s: record on %d live instances, want 2", master, n)
		}
		if err := rl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if n := records(name); n != 0 {
			t.Fatalf("%s: record left on %d instances", master, n)
		}
	}
	for _, s := range c.Live() {
		if err := s.CheckDenied(); err != nil {
			t.Fatal(err)
		}
	}
}
