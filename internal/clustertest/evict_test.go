package clustertest_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/observe"
	"github.com/relock-go/relock/reentrant"
)

// evictions records the MayEvict calls of an Observer, and the log
// records that mention eviction.
type evictions struct {
	observe.Base
	mu    sync.Mutex // guards told, addrs
	told  []observe.Eviction
	addrs []string // the addr attribute of each eviction log record
}

func (e *evictions) MayEvict(ev observe.Eviction) {
	e.mu.Lock()
	e.told = append(e.told, ev)
	e.mu.Unlock()
}

func (e *evictions) Enabled(context.Context, slog.Level) bool { return true }
func (e *evictions) WithAttrs([]slog.Attr) slog.Handler       { return e }
func (e *evictions) WithGroup(string) slog.Handler            { return e }

func (e *evictions) Handle(_ context.Context, r slog.Record) error {
	if !strings.Contains(r.Message, "evict") {
		return nil
	}
	addr := ""
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "addr" {
			addr = a.Value.String()
		}
		return true
	})
	e.mu.Lock()
	e.addrs = append(e.addrs, addr)
	e.mu.Unlock()
	return nil
}

// TestEvictionPerMaster: of a cluster whose one master has a maxmemory
// and volatile-lru, a client that locks names on every master warns of
// that master alone, once, with its address, and tells its Observer so;
// with replica sync on SyncAuto and off.
func TestEvictionPerMaster(t *testing.T) {
	c := needCluster(t)
	bg := context.Background()
	masters, err := c.Masters(bg)
	if err != nil {
		t.Fatal(err)
	}
	evicting := masters[0]
	admin := c.Node(evicting).Client(t)
	if err := admin.ConfigSet(bg, "maxmemory", "1gb").Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.ConfigSet(bg, "maxmemory-policy", "volatile-lru").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		_ = admin.ConfigSet(ctx, "maxmemory", "0").Err()
		_ = admin.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err()
	})
	// A name on each master.
	rdb := c.LockClient(t)
	names := map[string]string{}
	for i := 0; i < 1000 && len(names) < len(masters); i++ {
		name := redistest.Key(t)
		node, err := rdb.MasterForKey(bg, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := names[node.Options().Addr]; !ok {
			names[node.Options().Addr] = name
		}
	}
	if len(names) != len(masters) {
		t.Fatalf("names on %d of %d masters", len(names), len(masters))
	}
	for _, mode := range []struct {
		name string
		sync int
	}{{"SyncAuto", relock.SyncAuto}, {"SyncOff", relock.SyncOff}} {
		t.Run(mode.name, func(t *testing.T) {
			e := &evictions{}
			rc := newClient(t, c.LockClient(t), &relock.Options{Observer: e, Logger: slog.New(e), SyncReplicas: mode.sync})
			lockAll := func() {
				for _, name := range names {
					mu := reentrant.New(rc, name, nil)
					redistest.Unlock(t, mu, redistest.Lock(t, mu, bg))
				}
			}
			lockAll()
			// With replica sync off the check runs in the background.
			redistest.Eventually(t, wait, "the warning", func() bool {
				e.mu.Lock()
				defer e.mu.Unlock()
				return len(e.addrs) > 0
			})
			lockAll()
			e.mu.Lock()
			defer e.mu.Unlock()
			if len(e.addrs) != 1 || e.addrs[0] != evicting {
				t.Errorf("eviction logged for %q, want once for %s", e.addrs, evicting)
			}
			if len(e.told) != 1 || e.told[0].Addr != evicting || e.told[0].Policy != "volatile-lru" || e.told[0].MaxMemory != 1<<30 {
				t.Errorf("Observer told %+v, want once, of %s", e.told, evicting)
			}
		})
	}
}
