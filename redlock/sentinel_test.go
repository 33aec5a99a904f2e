package redlock_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestSentinelMasters: a RedLock over two Sentinel-managed masters and a
// plain one takes and releases the lock on all three. go-redis names
// every failover client by one placeholder address, which once made New
// refuse the second as a repeated client.
func TestSentinelMasters(t *testing.T) {
	redistest.SkipShort(t, "two Sentinel deployments")
	clients := clientsOn(t, shared[:1], nil)
	raws := []redis.UniversalClient{shared[0].Client(t)}
	for range 2 {
		s := redistest.StartSentinel(t)
		rc, err := relock.New(s.Client(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		clients = append(clients, rc)
		raws = append(raws, s.Client(t))
	}
	rl := redlock.New(clients, redistest.Key(t), nil)
	ctx, err := rl.Lock(context.Background())
	if err != nil {
		t.Fatalf("Lock over two Sentinel masters and a server: %v", err)
	}
	for i, raw := range raws {
		if held, err := raw.Exists(context.Background(), rl.Name()).Result(); err != nil || held != 1 {
			t.Errorf("master %d: EXISTS %s = %d, %v; want the lock on every master", i, rl.Name(), held, err)
		}
	}
	if err := rl.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
