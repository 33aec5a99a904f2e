// Package clustertest runs relock's locks on a Redis Cluster and behind
// Sentinel: the shared behaviour suite on a cluster, slot placement of
// every key and channel, sharded pub/sub wake-ups, the watchdog across
// masters, and failover. It holds tests only.
package clustertest_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// cluster is the cluster shared by the package's tests, nil when the
// binaries are not installed (the tests then skip). Tests that kill or
// move anything restore it (WaitHealthy) before they return.
var cluster *redistest.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	var c *redistest.Cluster
	var err error
	if !testing.Short() { // under -short every test skips (needCluster)
		c, err = redistest.LaunchCluster()
	}
	switch {
	case errors.Is(err, redistest.ErrNotInstalled):
		fmt.Fprintln(os.Stderr, "clustertest:", err, "- cluster tests will skip")
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cluster = c
	code := m.Run()
	if c != nil {
		c.Stop()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// needCluster skips t under -short (TestMain started no cluster) or when
// the cluster could not be started because the binaries are missing
// (never under RELOCK_REQUIRE_REDIS=1: TestMain fails instead), and
// returns it.
func needCluster(t *testing.T) *redistest.Cluster {
	t.Helper()
	redistest.SkipShort(t, "a Redis Cluster test (6 servers)")
	redistest.Record() // TestMain's lookup, for go test's cache
	if cluster == nil {
		t.Skip("needs redis-server and redis-cli to start a cluster")
	}
	return cluster
}

// wait bounds every wait for something that must happen. It is far above
// what a loaded 2-core machine needs, so only a bug can exhaust it.
const wait = 10 * time.Second

// newClient returns a relock client over a go-redis client of its own, as
// if it were a separate process; both close when t ends.
func newClient(t testing.TB, rdb redis.UniversalClient, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, rdb, opts)
}

// healthy waits until the cluster has settled (three live masters, every
// replica in sync), failing t otherwise.
func healthy(t testing.TB, c *redistest.Cluster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
}

// masterOf returns the address of the master serving key's slot, as rdb
// routes it.
func masterOf(t testing.TB, rdb *redis.ClusterClient, key string) string {
	t.Helper()
	node, err := rdb.MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return node.Options().Addr
}

// slotOf asks the server for key's hash slot.
func slotOf(t testing.TB, rdb *redis.ClusterClient, key string) int64 {
	t.Helper()
	n, err := rdb.ClusterKeySlot(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// namesOnEachMaster returns one name per master of the cluster, keyed by
// the master's address: base:0, base:1, ... until every master has one.
func namesOnEachMaster(t testing.TB, c *redistest.Cluster, rdb *redis.ClusterClient, base string) map[string]string {
	t.Helper()
	masters, err := c.Masters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for i := 0; len(names) < len(masters); i++ {
		if i == 1000 {
			t.Fatalf("no name of the form %s:N on every master %v: %v", base, masters, names)
		}
		name := base + ":" + strconv.Itoa(i)
		m := masterOf(t, rdb, name)
		if _, ok := names[m]; !ok {
			names[m] = name
		}
	}
	return names
}
