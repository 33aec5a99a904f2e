package transport

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestMastersPruned: a cluster client's state by master address (a
// Pipe's batchers, the masters' reports of their replicas) follows the
// layout. Once the slot of every key in use has moved to another master,
// a call there leaves one entry in each map, the new master's, where an
// entry for every address ever seen used to stay. The layout is the
// cluster client's own (ClusterSlots), over two embedded servers.
func TestMastersPruned(t *testing.T) {
	servers := []*miniredis.Miniredis{miniredis.RunT(t), miniredis.RunT(t)}
	addrs := []string{servers[0].Addr(), servers[1].Addr()}
	var owner atomic.Int32 // the index in addrs of the master of every slot
	cc := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: []string{addrs[0]},
		ClusterSlots: func(context.Context) ([]redis.ClusterSlot, error) {
			addr := addrs[owner.Load()]
			return []redis.ClusterSlot{{Start: 0, End: 16383, Nodes: []redis.ClusterNode{{Addr: addr}}}}, nil
		},
	})
	t.Cleanup(func() { cc.Close() })
	// views is kept in SyncAuto, synced with a count of replicas to wait
	// for (which the embedded server's WAIT never confirms).
	newClient := func(replicas int) *Transport {
		bg := new(testOwner)
		c := New(cc, Config{
			Log:          slog.New(slog.DiscardHandler),
			SyncReplicas: replicas,
			SyncTimeout:  10 * time.Millisecond,
			NotAcquired:  errors.New("not acquired"),
			Owner:        bg,
			End:          context.Background(),
		})
		t.Cleanup(func() { _ = c.Close() })
		t.Cleanup(bg.wg.Wait)
		return c
	}
	auto, counted := newClient(SyncAuto), newClient(1)
	ctx := context.Background()
	key := "{masters-test}"
	call := &Call{Script: redis.NewScript(`return redis.call('incr', KEYS[1])`), Keys: []string{key}}
	never := func(any) bool { return false }
	var want string // the master's address, as the cluster client names it
	for i, s := range servers {
		owner.Store(int32(i))
		// Each client sends through copies of cc (scriptClient), with
		// layouts of their own.
		for _, rdb := range []redis.UniversalClient{cc, auto.Scripts, counted.Scripts} {
			want = masterOf(t, rdb.(*redis.ClusterClient), key, s.Port())
		}
		for _, c := range []*Transport{auto, counted} {
			if _, err := call.Run(ctx, c.Pipe, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := c.RunAcquire(ctx, never, call); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, m := range map[string]*sync.Map{"nodes": &auto.Pipe.(*Pipe).nodes, "synced": &counted.Pipe.(*Pipe).synced} {
		var addrs []string
		m.Range(func(k, _ any) bool { addrs = append(addrs, k.(string)); return true })
		if len(addrs) != 1 || addrs[0] != want {
			t.Errorf("Pipe.%s holds %v, want only %s", name, addrs, want)
		}
	}
	auto.syncs.mu.Lock()
	defer auto.syncs.mu.Unlock()
	if _, ok := auto.syncs.views[want]; !ok || len(auto.syncs.views) != 1 {
		t.Errorf("syncs.views holds %d reports (the new master's: %v), want only %s's", len(auto.syncs.views), ok, want)
	}
}

// testOwner runs a Transport's background work (the eviction check of
// a client that counts replicas) in goroutines the test waits for.
type testOwner struct{ wg sync.WaitGroup }

func (o *testOwner) Background(f func()) bool {
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		f()
	}()
	return true
}

func (o *testOwner) BackgroundContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), OpTimeout)
}

// masterOf reloads cc's layout until it names the server on port as the
// master of key's slot, and returns that master's address as cc names
// it.
func masterOf(t *testing.T, cc *redis.ClusterClient, key, port string) string {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cc.ReloadState(ctx) // in the background
		if node, err := cc.MasterForKey(ctx, key); err == nil && strings.HasSuffix(node.Options().Addr, ":"+port) {
			return node.Options().Addr
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster client's layout did not name the server on port %s within 5s", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
