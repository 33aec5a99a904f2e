package clustertest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// within polls cond every 10ms for up to limit and reports whether it
// held.
func within(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// waiting starts a waiter for name on rc and returns a channel that
// delivers when it acquired (then it unlocks at once) and a stop that
// cancels it and waits for it.
func waiting(t *testing.T, mu *reentrant.Mutex) (acquired <-chan time.Time, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lctx, err := mu.Lock(ctx)
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("waiter: %v", err)
			}
			return
		}
		got <- time.Now()
		if err := mu.Unlock(lctx); err != nil {
			t.Errorf("waiter's unlock: %v", err)
		}
	}()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return got, stop
}

// handoff fails t unless acquired delivers within 2s of released.
func handoff(t *testing.T, acquired <-chan time.Time, released time.Time) {
	t.Helper()
	select {
	case got := <-acquired:
		t.Logf("waiter acquired %v after the release", got.Sub(released))
	case <-time.After(2 * time.Second):
		t.Fatalf("waiter not woken within 2s of the release (it sleeps until the 30s lease would end)")
	}
}

// shardSubs counts the sharded subscriptions on node to a lock's release
// channel and to the channels relock clients' waiters listen on,
// "<channel>:<client id>".
func shardSubs(node *redis.Client, channel string) int64 {
	ctx := context.Background()
	glob := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(channel)
	chans := node.PubSubShardChannels(ctx, glob+"*").Val()
	if len(chans) == 0 {
		return 0
	}
	var n int64
	for _, c := range node.PubSubShardNumSub(ctx, chans...).Val() {
		n += c
	}
	return n
}

// TestWakeUpAfterSlotMigration: when the slot of a lock moves to another
// master while a client waits for it, the server drops the waiter's
// sharded subscription (it pushes an "sunsubscribe"); the client must
// subscribe again on the new owner, or the release is never heard.
func TestWakeUpAfterSlotMigration(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	rdb := c.Client(t)
	name := redistest.Key(t)
	channel := "redisson_lock__channel:{" + name + "}"
	slot := int(slotOf(t, rdb, name))
	from := masterOf(t, rdb, name)
	masters, err := c.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	to := masters[0]
	if to == from {
		to = masters[1]
	}

	holder := reentrant.New(newClient(t, c.Client(t), nil), name, nil)
	hctx, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acquired, _ := waiting(t, reentrant.New(newClient(t, c.Client(t), nil), name, nil))
	redistest.Eventually(t, wait, "waiter subscribed on "+from, func() bool { return shardSubs(c.Node(from).Client(t), channel) == 1 })

	if err := c.MoveSlot(ctx, slot, to); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.MoveSlot(context.Background(), slot, from); err != nil {
			t.Error(err)
		}
		healthy(t, c)
	})
	t.Logf("slot %d of %s moved from %s to %s", slot, name, from, to)
	if !within(5*time.Second, func() bool { return shardSubs(c.Node(to).Client(t), channel) == 1 }) {
		t.Errorf("waiter not subscribed on the slot's new master %s", to)
	}
	released := time.Now()
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	handoff(t, acquired, released)
}

// TestWakeUpAfterFailover: a master that stops answering (paused, so its
// connections stay open) is failed over while a client waits for a lock
// in its slots. The release then happens on the promoted replica; the
// waiter must be subscribed there to hear it.
func TestWakeUpAfterFailover(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	rdb := c.Client(t)
	name := redistest.Key(t)
	channel := "redisson_lock__channel:{" + name + "}"
	old := masterOf(t, rdb, name)

	holder := reentrant.New(newClient(t, c.Client(t), nil), name, nil)
	if _, err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	replicas, err := c.Replicas(ctx, old)
	if err != nil || len(replicas) != 1 {
		t.Fatalf("replicas of %s: %v (%v)", old, replicas, err)
	}
	// Let the lock reach the replica, so that it survives the failover.
	conn := c.Node(replicas[0]).Client(t).Conn()
	defer conn.Close()
	if err := conn.ReadOnly(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, wait, "lock replicated", func() bool { return conn.Exists(ctx, name).Val() == 1 })

	acquired, _ := waiting(t, reentrant.New(newClient(t, c.Client(t), nil), name, nil))
	redistest.Eventually(t, wait, "waiter subscribed on "+old, func() bool { return shardSubs(c.Node(old).Client(t), channel) == 1 })

	node := c.Node(old)
	if err := node.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	t.Cleanup(func() {
		if err := node.Resume(); err != nil {
			t.Error(err)
		}
		healthy(t, c)
	})
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.WaitFailover(fctx, old); err != nil {
		t.Fatal(err)
	}
	promoted := masterOf(t, c.Client(t), name)
	t.Logf("%s failed over to %s %v after the pause", old, promoted, time.Since(paused))
	// The hub notices a silent master within two health intervals (1s
	// each) and then looks for its replacement at every reconnect; the
	// cluster layout it asks is reloaded in the background by go-redis,
	// which may itself wait out a read timeout (3s) on the paused node.
	if !within(10*time.Second, func() bool { return shardSubs(c.Node(promoted).Client(t), channel) == 1 }) {
		t.Errorf("waiter not subscribed on the promoted master %s", promoted)
	}
	// A fresh client releases the lock on the promoted master (the
	// holder's own client still routes to the paused one for a while),
	// once its layout routes there and it has sent a first command: that
	// one could otherwise wait out a read timeout on the paused node
	// (go-redis asks a random node for COMMAND), which would delay the
	// release, not the wake-up. relock's own copy of that client loads
	// the layout again, from a node that may not know of the failover
	// yet on a loaded machine: a ForceUnlock that goes to the paused node
	// runs out of time and changes nothing, and is tried again.
	rrdb := c.Client(t)
	redistest.Eventually(t, 2*wait, "releaser routes to "+promoted, func() bool {
		rrdb.ReloadState(ctx)
		return rrdb.Exists(ctx, name).Err() == nil && masterOf(t, rrdb, name) == promoted
	})
	releaser := reentrant.New(newClient(t, rrdb, nil), name, nil)
	var released time.Time
	var took time.Duration
	var ok bool
	for try := 0; ; try++ {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		released = time.Now()
		ok, err = releaser.ForceUnlock(rctx)
		took = time.Since(released)
		cancel()
		if err == nil || try == 4 {
			break
		}
		t.Logf("ForceUnlock on the promoted master, try %d: %v", try+1, err)
	}
	if err != nil || !ok {
		t.Fatalf("ForceUnlock on the promoted master = %v, %v; want true (the lock was replicated)", ok, err)
	}
	// The release wakes the waiter at once, and its acquire goes to the
	// promoted master: the hub learnt the new layout through the client
	// acquires use, before it moved the channel and woke its waiters.
	// Waiters are not woken when the paused master goes silent, so none
	// is caught in an acquire sent there, waiting out the client's read
	// timeout (5s), when the release comes.
	select {
	case got := <-acquired:
		t.Logf("waiter acquired %v after the release (ForceUnlock took %v)", got.Sub(released), took)
	case <-time.After(5 * time.Second):
		t.Fatal("waiter did not acquire within 5s of the release: it was not woken, or its acquire went to the paused master")
	}
}

// TestHoldAcrossMasterKill: a master is killed (SIGKILL) while clients
// hold locks in its slots, the locks having reached its replica. The
// replica takes over, the holder's watchdog renews the lock there (its
// pipelines follow the new topology) and the holder never hears of a
// loss; a lock on another master is untouched; and after the failover a
// new waiter is subscribed on the promoted master and woken by the
// release, even on a client whose hub had a connection to the dead one.
func TestHoldAcrossMasterKill(t *testing.T) {
	c := needCluster(t)
	ctx := context.Background()
	rdb := c.Client(t)
	masters, err := c.Masters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	old, other := masters[0], masters[1]
	base := redistest.Key(t)
	name := namesOnEachMaster(t, c, rdb, base)[old]
	control := namesOnEachMaster(t, c, rdb, base)[other]
	warm := namesOnEachMaster(t, c, rdb, base+":warm")[old]
	stale := namesOnEachMaster(t, c, rdb, base+":stale")[old]
	channel := "redisson_lock__channel:{" + name + "}"

	// Each client's go-redis client is kept, to make it learn the new
	// topology (see below).
	opts := &relock.Options{WatchdogTimeout: 15 * time.Second}
	hrdb, wrdb := c.Client(t), c.Client(t)
	holderRC, waiterRC := newClient(t, hrdb, opts), newClient(t, wrdb, nil)
	staleRC := newClient(t, c.Client(t), opts)
	mu, cmu, smu := reentrant.New(holderRC, name, nil), reentrant.New(holderRC, control, nil), reentrant.New(staleRC, stale, nil)
	hctx, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cctx, err := cmu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sctx, err := smu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The waiter's hub gets a connection to the master about to die.
	wmu := reentrant.New(waiterRC, warm, nil)
	wctx, err := wmu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	acquired, _ := waiting(t, reentrant.New(newClient(t, c.Client(t), nil), warm, nil))
	redistest.Eventually(t, wait, "warm-up waiter subscribed", func() bool {
		return shardSubs(c.Node(old).Client(t), "redisson_lock__channel:{"+warm+"}") == 1
	})
	if err := wmu.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
	<-acquired
	// The warm-up waiter unlocks at once; that must land before the kill,
	// or its unlock may reach a replica its lock had not.
	redistest.Eventually(t, wait, "warm-up waiter's unlock", func() bool { return rdb.Exists(ctx, warm).Val() == 0 })

	replicas, err := c.Replicas(ctx, old)
	if err != nil || len(replicas) != 1 {
		t.Fatalf("replicas of %s: %v (%v)", old, replicas, err)
	}
	conn := c.Node(replicas[0]).Client(t).Conn()
	defer conn.Close()
	if err := conn.ReadOnly(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, wait, "locks replicated", func() bool {
		return conn.Exists(ctx, name).Val()+conn.Exists(ctx, stale).Val() == 2
	})

	if err := c.Kill(old); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	t.Cleanup(func() {
		if err := c.Restart(old); err != nil {
			t.Error(err)
		}
		healthy(t, c)
	})
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.WaitFailover(fctx, old); err != nil {
		t.Fatal(err)
	}
	promoted := replicas[0]
	t.Logf("%s killed; %s took over %v later", old, promoted, time.Since(killed))
	node := c.Node(promoted).Client(t)

	t.Run("UnlockBeforeTopologyReload", func(t *testing.T) {
		// The cluster is healthy again: an Unlock now must work.
		if err := smu.Unlock(sctx); err != nil {
			t.Errorf("Unlock on a healthy cluster, %v after the kill: %v", time.Since(killed), err)
		}
	})

	ttl := node.PTTL(ctx, name).Val()
	if ttl <= 0 {
		t.Fatalf("lock missing on the promoted master (PTTL %v) although it was replicated", ttl)
	}
	redistest.Eventually(t, 15*time.Second, "holder's renewal on the promoted master", func() bool {
		return node.PTTL(ctx, name).Val() > ttl || hctx.Err() != nil
	})
	t.Logf("holder's lease renewed on %s %v after the kill", promoted, time.Since(killed))
	if hctx.Err() != nil || cctx.Err() != nil {
		t.Fatalf("holder told of a loss: %v, %v", context.Cause(hctx), context.Cause(cctx))
	}
	if err := cmu.Unlock(cctx); err != nil {
		t.Fatalf("lock on the surviving master %s: %v", other, err)
	}

	// go-redis (v9.23) retries a dead master on dial errors without
	// reloading its topology, which it otherwise does only on MOVED or
	// once its state is ClusterStateReloadInterval (60s) old: until then
	// the clients' calls for the promoted master's slots fail with
	// "connection refused" (UnlockBeforeTopologyReload). Make them
	// learn it.
	for _, c := range []*redis.ClusterClient{hrdb, wrdb} {
		redistest.Eventually(t, wait, "client routes to "+promoted, func() bool {
			c.ReloadState(ctx)
			return masterOf(t, c, name) == promoted
		})
	}
	acquired, _ = waiting(t, reentrant.New(waiterRC, name, nil))
	redistest.Eventually(t, wait, "waiter subscribed on "+promoted, func() bool { return shardSubs(node, channel) == 1 })
	time.Sleep(50 * time.Millisecond) // let the waiter's retry after subscribing land
	released := time.Now()
	if err := mu.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	handoff(t, acquired, released)
}
