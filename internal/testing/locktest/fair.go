package locktest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// RunFair runs the fair lock's own suite, its queue order, on srv (Run
// checks what it shares with the other lock types with Fair).
func RunFair(t *testing.T, srv *redistest.Server) { RunFairKind(t, srv, Fair) }

// RunFairKind is RunFair for any kind whose waiters queue as the fair
// lock's do (Kind.FIFO).
func RunFairKind(t *testing.T, srv *redistest.Server, k Kind) {
	(&env{srv: srv, k: k}).runAll(t, fairTests)
}

// RunFairCluster is RunFairKind on the cluster c.
func RunFairCluster(t *testing.T, c *redistest.Cluster, k Kind) {
	(&env{cluster: c, k: k}).runAll(t, fairTests)
}

var fairTests = []test{{"FIFO", fifo, false}}

// fifo: 10 waiters from 10 clients, queued in a known order, acquire in
// that order, each after the previous unlocked; a releaser that locks
// again at once queues behind them.
func fifo(t *testing.T, e *env) {
	raw := e.redis(t)
	bg := context.Background()
	name := redistest.Key(t)
	holderOwner := relock.WithNewOwner(bg)
	holder := e.k.New(e.client(t, nil), name, 0)
	hctx := redistest.Lock(t, holder, holderOwner)

	var (
		mu      sync.Mutex
		order   []int
		holding atomic.Bool
		wg      sync.WaitGroup
	)
	acquire := func(who int, m Lock, ctx context.Context) {
		lctx, err := m.Lock(ctx)
		if err != nil {
			t.Error(err)
			return
		}
		if !holding.CompareAndSwap(false, true) {
			t.Errorf("waiter %d acquired while another held the lock", who)
		}
		mu.Lock()
		order = append(order, who)
		mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		holding.Store(false)
		if err := m.Unlock(lctx); err != nil {
			t.Error(err)
		}
	}
	const waiters = 10
	for i := range waiters {
		rc := e.client(t, nil)
		m := e.k.New(rc, name, 0)
		wg.Go(func() { acquire(i, m, bg) })
		WaitQueued(t, raw, name, rc.ID(), i+1)
	}
	redistest.Unlock(t, holder, hctx)
	// The releaser comes straight back: it must queue behind all ten.
	wg.Go(func() { acquire(-1, holder, holderOwner) })
	wg.Wait()
	if want := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, -1}; !slices.Equal(order, want) {
		t.Fatalf("acquisition order %v, want %v", order, want)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left after every waiter finished")
	}
	e.assertNoResidue(t, name)
}

// WaitQueued waits until the fair lock name's queue has length entries,
// the last of client id, and returns that entry: the waiter's field.
func WaitQueued(t testing.TB, raw redis.UniversalClient, name, id string, length int) string {
	t.Helper()
	queue := FairResidue(name)[0]
	var q []string
	redistest.Eventually(t, 5*time.Second, "waiter of client "+id+" queued", func() bool {
		q = raw.LRange(context.Background(), queue, 0, -1).Val()
		return len(q) == length && strings.HasPrefix(q[length-1], id+":")
	})
	return q[length-1]
}
