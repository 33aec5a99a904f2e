package clustertest_test

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// permitWaiting runs s.Acquire(ctx) in a goroutine and delivers when it
// returned with a permit, which it releases; an error other than ctx's
// end fails t. The goroutine is cancelled and waited for when t ends.
func permitWaiting(t *testing.T, s *permits.Semaphore) <-chan time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p, err := s.Acquire(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("permit waiter: %v", err)
			}
			return
		}
		got <- time.Now()
		if err := p.Release(context.Background()); err != nil {
			t.Errorf("permit waiter's Release: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return got
}

// TestPermitsCluster: on a Redis 7 cluster with sharded pub/sub
// (PubSubAuto), on every master and for a name with its own hash tag,
// the count, the permits ZSET {<name>}:timeout and the channel
// redisson_sc:{<name>} share the name's slot; a waiter subscribes with
// SSUBSCRIBE on that master and is woken at once by another client's
// release (SPUBLISH from the script). Then one client holds a permit on
// every master with a 1.5s watchdog for three leases: each round renews
// them all (go-redis splits the pipeline by node), every permit stays
// held, and its expiry stays ahead of its master's clock.
func TestPermitsCluster(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t)
	holder := newClient(t, c.LockClient(t), nil)
	waiter := newClient(t, c.LockClient(t), nil)
	bg := context.Background()
	names := namesOnEachMaster(t, c, rdb, redistest.Key(t))
	tagged := "{" + redistest.Key(t) + "}:permits"
	names[masterOf(t, rdb, tagged)+" (hash tag)"] = tagged
	for where, name := range names {
		t.Run(where, func(t *testing.T) {
			zset, channel := "{"+name+"}:timeout", "redisson_sc:{"+name+"}"
			if name == tagged {
				zset, channel = name+":timeout", "redisson_sc:"+name
			}
			for _, k := range []string{zset, channel} {
				if a, b := slotOf(t, rdb, name), slotOf(t, rdb, k); a != b {
					t.Fatalf("%s in slot %d, %s in slot %d", name, a, k, b)
				}
			}
			master := masterOf(t, rdb, name)
			node := c.Node(master).Client(t)
			hs := permits.New(holder, name, nil)
			if ok, err := hs.TrySetPermits(bg, 1); err != nil || !ok {
				t.Fatalf("TrySetPermits = %v, %v", ok, err)
			}
			p, err := hs.Acquire(bg)
			if err != nil {
				t.Fatal(err)
			}
			if n := node.ZScore(bg, zset, rawPermit(t, p.ID())).Val(); n == 0 {
				t.Fatalf("permit %s not in %s on %s", p.ID(), zset, master)
			}
			acquired := permitWaiting(t, permits.New(waiter, name, nil))
			redistest.Eventually(t, wait, "waiter subscribed on "+master, func() bool {
				return node.PubSubShardNumSub(bg, channel).Val()[channel] == 1
			})
			for _, s := range c.Live() {
				if n := s.Client(t).PubSubNumSub(bg, channel).Val()[channel]; n != 0 {
					t.Fatalf("%d global subscriptions to %s on %s: the client is not in sharded mode", n, channel, s.Addr)
				}
			}
			time.Sleep(50 * time.Millisecond) // let the waiter's attempt after subscribing land
			released := time.Now()
			if err := p.Release(bg); err != nil {
				t.Fatal(err)
			}
			handoff(t, acquired, released)
			redistest.Eventually(t, wait, "the waiter's release", func() bool { return node.Get(bg, name).Val() == "1" })
			rdb.Del(bg, name, zset)
		})
	}

	t.Run("watchdog", func(t *testing.T) {
		const timeout = 1500 * time.Millisecond
		rc := newClient(t, c.LockClient(t), &relock.Options{WatchdogTimeout: timeout})
		type held struct {
			name, zset string
			p          *permits.Permit
		}
		var all []held
		for _, name := range namesOnEachMaster(t, c, rdb, redistest.Key(t)) {
			s := permits.New(rc, name, nil)
			if ok, err := s.TrySetPermits(bg, 1); err != nil || !ok {
				t.Fatalf("TrySetPermits(%s) = %v, %v", name, ok, err)
			}
			p, err := s.Acquire(bg)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, held{name, "{" + name + "}:timeout", p})
		}
		for range 6 {
			time.Sleep(timeout / 2)
			for _, h := range all {
				if err := h.p.Context().Err(); err != nil {
					t.Fatalf("permit of %s lost: %v", h.name, context.Cause(h.p.Context()))
				}
				node := c.Node(masterOf(t, rdb, h.name)).Client(t)
				now, err := node.Time(bg).Result()
				if err != nil {
					t.Fatal(err)
				}
				score := node.ZScore(bg, h.zset, rawPermit(t, h.p.ID())).Val()
				if left := time.Duration(int64(score)-now.UnixMilli()) * time.Millisecond; left <= 0 || left > timeout {
					t.Fatalf("permit of %s expires %v from its master's now, want within the %v lease", h.name, left, timeout)
				}
			}
		}
		for _, h := range all {
			if err := h.p.Release(bg); err != nil {
				t.Fatal(err)
			}
			rdb.Del(bg, h.name)
		}
	})
}

// TestPermitsSentinel: through failover clients (a master with two
// replicas behind three sentinels), permits are set and taken (the
// acquire waits for the replicas, SyncAuto, so a replica has the permit
// when Acquire returns), a waiter listens on the master, and a release
// wakes it at once.
func TestPermitsSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	bg := context.Background()
	holder := permits.New(newClient(t, s.Client(t), nil), redistest.Key(t), nil)
	name := holder.Name()
	zset, channel := "{"+name+"}:timeout", "redisson_sc:{"+name+"}"
	waiter := permits.New(newClient(t, s.Client(t), nil), name, nil)
	master, err := s.MasterAddr(bg)
	if err != nil {
		t.Fatal(err)
	}
	node := s.Node(master).Client(t)

	if ok, err := holder.TrySetPermits(bg, 1); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	p, err := holder.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	member := rawPermit(t, p.ID())
	if v := node.Get(bg, name).Val(); v != "0" {
		t.Fatalf("count on the master %s = %q, want 0", master, v)
	}
	replicated := 0
	for _, d := range s.Data {
		if d.Addr != master && d.Client(t).ZScore(bg, zset, member).Val() > 0 {
			replicated++
		}
	}
	if replicated == 0 {
		t.Fatal("no replica had the permit when Acquire returned")
	}

	acquired := permitWaiting(t, waiter)
	redistest.Eventually(t, wait, "waiter subscribed on the master", func() bool {
		return node.PubSubNumSub(bg, channel).Val()[channel] == 1
	})
	time.Sleep(50 * time.Millisecond) // let the waiter's attempt after subscribing land
	released := time.Now()
	if err := p.Release(bg); err != nil {
		t.Fatal(err)
	}
	handoff(t, acquired, released)
	redistest.Eventually(t, wait, "the waiter's release", func() bool { return node.Get(bg, name).Val() == "1" })
	if n := node.Exists(bg, zset).Val(); n != 0 {
		t.Fatal("permits left held on the master")
	}
	node.Del(bg, name)
}

// rawPermit is a permit id as the permits ZSET holds it.
func rawPermit(t testing.TB, id string) string {
	t.Helper()
	b, err := hex.DecodeString(id)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
