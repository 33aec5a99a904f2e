package locktest

import (
	"context"
	"sync"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// mutualExclusion: 16 clients, each its own "process", do 100 non-atomic
// read-modify-writes of a plain Redis counter under the lock (30 under
// -short).
func mutualExclusion(t *testing.T, e *env) {
	const clients = 16
	iterations := redistest.Short(100, 30)
	name := redistest.Key(t)
	counter := name + ":counter"
	bg := context.Background()
	var wg sync.WaitGroup
	for range clients {
		rdb := e.redis(t) // the counter's: the lock's user may not GET or SET
		rc, err := relock.New(e.lockRedis(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		mu := e.k.New(rc, name, 0)
		wg.Go(func() {
			for range iterations {
				ctx, err := mu.Lock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := rdb.Get(ctx, counter).Int()
				if err := rdb.Set(ctx, counter, n+1, 0).Err(); err != nil {
					t.Error(err)
				}
				if err := mu.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	raw := e.redis(t)
	if n, err := raw.Get(bg, counter).Int(); err != nil || n != clients*iterations {
		t.Fatalf("counter = %d (%v), want %d", n, err, clients*iterations)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left in Redis")
	}
	e.assertNoResidue(t, name)
	raw.Del(bg, counter)
}
