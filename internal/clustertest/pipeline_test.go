package clustertest_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// nodeBatches records the script pipelines a client sends: their sizes,
// those that end with WAIT, and on a cluster (rdb set) whether each went
// to one master only.
type nodeBatches struct {
	rdb     *redis.ClusterClient
	mu      sync.Mutex // guards largest, waits and mixed
	largest int
	waits   int
	mixed   []string
}

func (h *nodeBatches) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *nodeBatches) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *nodeBatches) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		masters := map[string]bool{}
		n := 0
		for _, cmd := range cmds {
			args := cmd.Args()
			if cmd.Name() != "evalsha" || len(args) < 4 {
				continue
			}
			n++
			if h.rdb == nil {
				continue
			}
			if node, err := h.rdb.MasterForKey(ctx, fmt.Sprint(args[3])); err == nil {
				masters[node.Options().Addr] = true
			}
		}
		h.mu.Lock()
		h.largest = max(h.largest, n)
		if n > 1 && cmds[len(cmds)-1].Name() == "wait" {
			h.waits++
		}
		if len(masters) > 1 {
			h.mixed = append(h.mixed, fmt.Sprint(masters))
		}
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// TestPipelinePerNode: on a cluster, the acquires and unlocks of
// goroutines that meet on one client go out in pipelines, each to the
// one master that owns every call's slot, and every caller gets its own
// reply.
func TestPipelinePerNode(t *testing.T) {
	c := needCluster(t)
	healthy(t, c)
	rdb := c.LockClient(t)
	hook := &nodeBatches{rdb: c.Client(t)}
	rdb.AddHook(hook)
	// Replica sync sends an acquire with its WAIT on a connection of its
	// own: off, the acquires are pipelined too.
	rc := newClient(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff})
	base := redistest.Key(t)
	redistest.Churn(t, 32, 40, func(w, i int) relock.Locker {
		return reentrant.New(rc, fmt.Sprintf("%s:%d:%d", base, w, i%7), nil)
	})
	hook.mu.Lock()
	defer hook.mu.Unlock()
	if hook.largest < 2 {
		t.Errorf("largest batch %d: nothing pipelined", hook.largest)
	}
	if len(hook.mixed) > 0 {
		t.Errorf("batches that span masters: %v", hook.mixed)
	}
}
