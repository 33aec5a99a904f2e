package relockotel_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/relock-go/relock/observe"
	"github.com/relock-go/relock/reentrant"
)

var policyKey = attribute.Key("relock.master.maxmemory_policy")

// TestMayEvict: a client of a master with a maxmemory and volatile-lru
// counts it once on relock.master.may_evict, with its policy, however
// many locks it takes; a master whose policy could not be read counts as
// "unknown", with its address on a cluster.
func TestMayEvict(t *testing.T) {
	e := newEnv(t, false)
	bg := context.Background()
	admin := e.redis(t)
	for _, kv := range [][2]string{{"maxmemory", "100mb"}, {"maxmemory-policy", "volatile-lru"}} {
		if err := admin.ConfigSet(bg, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rc := e.observed(t, 0)
	for _, name := range []string{t.Name() + ":a", t.Name() + ":b"} {
		mu := reentrant.New(rc, name, nil)
		lctx, err := mu.Lock(bg)
		if err != nil {
			t.Fatal(err)
		}
		if err := mu.Unlock(lctx); err != nil {
			t.Fatal(err)
		}
	}
	ms := e.collect(t)
	if n, ok := value(t, ms, "relock.master.may_evict", policyKey.String("volatile-lru")); !ok || n != 1 {
		t.Fatalf("relock.master.may_evict{volatile-lru} = %d, %v; want 1; points %+v", n, ok, points(t, ms, "relock.master.may_evict"))
	}

	e.obs.MayEvict(observe.Eviction{Addr: "10.0.0.1:6379", Err: errors.New("NOPERM")})
	ms = e.collect(t)
	if n, ok := value(t, ms, "relock.master.may_evict", policyKey.String("unknown"), attribute.String("server.address", "10.0.0.1:6379")); !ok || n != 1 {
		t.Fatalf("relock.master.may_evict{unknown} = %d, %v; want 1", n, ok)
	}
}
