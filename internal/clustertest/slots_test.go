package clustertest_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// prefix and suffix derive names as Redisson does (docs/wire-layout.md),
// written out here rather than taken from the library so that the test
// pins the layout it checks.
func prefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

func suffix(name, s string) string {
	if strings.Contains(name, "{") {
		return name + ":" + s
	}
	return "{" + name + "}:" + s
}

// testNames returns names for lock type kind: one on each master, and
// names carrying their own hash tag in several positions.
func testNames(t *testing.T, c *redistest.Cluster, rdb *redis.ClusterClient, kind string) []string {
	t.Helper()
	base := redistest.Key(t) + ":" + kind
	var names []string
	for _, n := range namesOnEachMaster(t, c, rdb, base) {
		names = append(names, n)
	}
	return append(names, "{"+base+"}", "{"+base+"}:cart", base+":{tag}", "pre{"+base+"}post")
}

// A placement is what a lock named name has created in Redis while held
// and waited for: keys (exact names, or prefixes ending in "*") and
// sharded channels (likewise).
type placement struct {
	name     string
	keys     []string
	channels []string
}

// checkPlacement asserts that every key and sharded channel whose name
// contains the lock's name is on the master serving the lock's slot, in
// that slot, that the expected ones are there, and that no global
// channel carries the name (the cluster clients use sharded pub/sub). It
// returns the keys.
func checkPlacement(t *testing.T, c *redistest.Cluster, rdb *redis.ClusterClient, p placement) []string {
	t.Helper()
	ctx := context.Background()
	slot, owner := slotOf(t, rdb, p.name), masterOf(t, rdb, p.name)
	match := "*" + p.name + "*"
	masters, err := c.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys, channels []string
	for _, m := range masters {
		node := c.Node(m).Client(t)
		var found []string
		iter := node.Scan(ctx, 0, match, 100).Iterator()
		for iter.Next(ctx) {
			found = append(found, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		shard, err := node.PubSubShardChannels(ctx, match).Result()
		if err != nil {
			t.Fatal(err)
		}
		global, err := node.PubSubChannels(ctx, match).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(global) > 0 {
			t.Errorf("%s: global channels %v on %s: waiters did not use sharded pub/sub", p.name, global, m)
		}
		if m != owner && len(found)+len(shard) > 0 {
			t.Errorf("%s (slot %d, master %s): keys %v, channels %v on master %s", p.name, slot, owner, found, shard, m)
			continue
		}
		keys = append(keys, found...)
		channels = append(channels, shard...)
	}
	for _, k := range append(append([]string{}, keys...), channels...) {
		if s := slotOf(t, rdb, k); s != slot {
			t.Errorf("%s is in slot %d, its lock %s in slot %d", k, s, p.name, slot)
		}
	}
	for _, want := range p.keys {
		if !present(keys, want) {
			t.Errorf("%s: key %s missing from %v", p.name, want, keys)
		}
	}
	for _, want := range p.channels {
		if !present(channels, want) {
			t.Errorf("%s: channel %s missing from %v", p.name, want, channels)
		}
	}
	t.Logf("%s: slot %d on %s: keys %v, channels %v", p.name, slot, owner, keys, channels)
	return keys
}

// present reports whether list has want, or a name starting with want's
// text before a final "*".
func present(list []string, want string) bool {
	for _, s := range list {
		if s == want || strings.HasSuffix(want, "*") && strings.HasPrefix(s, strings.TrimSuffix(want, "*")) {
			return true
		}
	}
	return false
}

// waitFor starts lock in a goroutine with a context that the returned
// stop cancels; stop then waits for the goroutine.
func waitFor(t *testing.T, lock func(context.Context) (context.Context, error)) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := lock(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("waiter: %v, want it cancelled", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// TestKeysShareTheLockSlot takes each lock type under names on every
// master and names with their own hash tag, with a waiter, and checks
// where every key and channel went: all in the lock key's slot. (A key
// elsewhere would fail the scripts with CROSSSLOT, and a channel
// elsewhere would never reach its waiters.)
func TestKeysShareTheLockSlot(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	holder := newClient(t, c.Client(t), nil)
	waiter := newClient(t, c.Client(t), nil)
	bg := context.Background()
	// subscribed waits until a waiter's channel is subscribed.
	subscribed := func(t *testing.T, channel string) {
		t.Helper()
		node, err := rdb.MasterForKey(bg, channel)
		if err != nil {
			t.Fatal(err)
		}
		redistest.Eventually(t, wait, "waiter subscribed to "+channel, func() bool {
			chans := node.PubSubShardChannels(bg, channel+"*").Val()
			return len(chans) > 0
		})
	}

	t.Run("reentrant", func(t *testing.T) {
		for _, name := range testNames(t, c, rdb, "reentrant") {
			mu := reentrant.New(holder, name, &reentrant.Options{Fencing: true})
			ctx, err := mu.Lock(bg)
			if err != nil {
				t.Fatal(err)
			}
			// The waiter listens on its client's channel and registers
			// in relock's waiter registry.
			channel := prefix("redisson_lock__channel", name) + ":" + waiter.ID()
			stop := waitFor(t, reentrant.New(waiter, name, nil).Lock)
			subscribed(t, channel)
			checkPlacement(t, c, rdb, placement{
				name:     name,
				keys:     []string{name, prefix("redisson_lock_token", name), prefix("relock_lock_waiters", name)},
				channels: []string{channel},
			})
			stop()
			if err := mu.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			rdb.Del(bg, prefix("redisson_lock_token", name))
		}
	})

	t.Run("fair", func(t *testing.T) {
		for _, name := range testNames(t, c, rdb, "fair") {
			mu := fair.New(holder, name, nil)
			ctx, err := mu.Lock(bg)
			if err != nil {
				t.Fatal(err)
			}
			channel := prefix("redisson_lock__channel", name) + ":" + waiter.ID()
			stop := waitFor(t, fair.New(waiter, name, nil).Lock)
			subscribed(t, channel)
			checkPlacement(t, c, rdb, placement{
				name: name,
				keys: []string{name, prefix("redisson_lock_queue", name), prefix("redisson_lock_timeout", name)},
				// The waiter's client's channel, "<prefix>:<client id>"
				// (a Redisson waiter's is "<prefix>:<its field>").
				channels: []string{channel},
			})
			stop()
			if err := mu.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("rwlock", func(t *testing.T) {
		for _, name := range testNames(t, c, rdb, "rwlock") {
			rw := rwlock.New(holder, name, nil)
			ctx, err := rw.RLock(bg)
			if err != nil {
				t.Fatal(err)
			}
			if ctx, err = rw.RLock(ctx); err != nil {
				t.Fatal(err)
			}
			channel := prefix("redisson_rwlock", name)
			stop := waitFor(t, rwlock.New(waiter, name, nil).Lock)
			subscribed(t, channel)
			// One timeout key per read hold:
			// "{<name>}:<field>:rwlock_timeout:<i>".
			timeouts := suffix(name, holder.ID()+":")
			keys := checkPlacement(t, c, rdb, placement{
				name:     name,
				keys:     []string{name, timeouts + "*"},
				channels: []string{channel},
			})
			holds := 0
			for _, k := range keys {
				if strings.HasPrefix(k, timeouts) && (strings.HasSuffix(k, ":rwlock_timeout:1") || strings.HasSuffix(k, ":rwlock_timeout:2")) {
					holds++
				}
			}
			if holds != 2 {
				t.Errorf("%s: %d read-hold timeout keys among %v, want 2", name, holds, keys)
			}
			stop()
			for range 2 {
				if err := rw.RUnlock(ctx); err != nil {
					t.Fatal(err)
				}
			}
		}
	})

	// Every lock was released: nothing of any is left on any master.
	ctx := context.Background()
	masters, err := c.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range masters {
		if left := c.Node(m).Client(t).Keys(ctx, "*"+t.Name()+"*").Val(); len(left) > 0 {
			t.Errorf("left on %s: %v", m, left)
		}
	}
}

// TestNamesSplittingSlotsRefused: a name whose braces would put its
// derived keys in another slot than the lock key is refused with
// ErrInvalidName by every lock type, before anything reaches Redis. The
// test first shows the split the rule prevents.
func TestNamesSplittingSlotsRefused(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	rc := newClient(t, c.Client(t), nil)
	bg := context.Background()
	for _, name := range []string{"a{}b", "x}y", "{", "x{y", "{}", "}{"} {
		t.Run(name, func(t *testing.T) {
			lockSlot := slotOf(t, rdb, name)
			derived := []string{
				prefix("redisson_lock__channel", name), prefix("redisson_lock_queue", name),
				prefix("redisson_rwlock", name), suffix(name, "x:1:rwlock_timeout:1"),
			}
			split := false
			for _, d := range derived {
				split = split || slotOf(t, rdb, d) != lockSlot
			}
			if !split {
				t.Errorf("%q: every derived name shares slot %d; the rule refuses it for nothing", name, lockSlot)
			}
			for what, lock := range map[string]func(context.Context) (context.Context, error){
				"reentrant": reentrant.New(rc, name, nil).Lock,
				"fenced":    reentrant.New(rc, name, &reentrant.Options{Fencing: true}).Lock,
				"fair":      fair.New(rc, name, nil).Lock,
				"read":      rwlock.New(rc, name, nil).RLock,
				"write":     rwlock.New(rc, name, nil).Lock,
			} {
				if _, err := lock(bg); !errors.Is(err, relock.ErrInvalidName) {
					t.Errorf("%s Lock(%q) = %v, want ErrInvalidName", what, name, err)
				}
			}
			if n := rdb.Exists(bg, name).Val(); n != 0 {
				t.Errorf("%q written despite the refusal", name)
			}
		})
	}
	// The same names with a proper tag are accepted and work.
	for _, name := range []string{"a{b}", "x{y}z"} {
		mu := reentrant.New(rc, name+redistest.Key(t), nil)
		ctx, err := mu.TryLock(bg, time.Second)
		if err != nil {
			t.Fatalf("%s: %v", mu.Name(), err)
		}
		if err := mu.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
