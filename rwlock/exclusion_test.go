package rwlock_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/rwlock"
)

// TestExclusion: on 8 clients, writers do non-atomic read-modify-writes of
// a counter and write a pair of keys in two steps; readers check that the
// two halves of the pair agree. Any overlap of a writer with anyone shows.
func TestExclusion(t *testing.T) {
	const clients, writes, reads = 8, 40, 60
	bg := context.Background()
	name := redistest.Key(t)
	counter, left, right := name+":counter", name+":left", name+":right"
	raw := srv.Client(t)
	var wg sync.WaitGroup
	var readsDone atomic.Int64
	for c := range clients {
		rdb := srv.Client(t)
		rc, err := relock.New(rdb, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		rw := rwlock.New(rc, name, nil)
		wg.Go(func() {
			for i := range writes {
				ctx, err := rw.Lock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := rdb.Get(ctx, counter).Int()
				rdb.Set(ctx, left, strconv.Itoa(c*1000+i), 0)
				rdb.Set(ctx, counter, n+1, 0)
				rdb.Set(ctx, right, strconv.Itoa(c*1000+i), 0)
				if err := rw.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
		wg.Go(func() {
			for range reads {
				ctx, err := rw.RLock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				l, r := rdb.Get(ctx, left).Val(), rdb.Get(ctx, right).Val()
				if l != r {
					t.Errorf("reader saw a half-written pair: %q / %q", l, r)
				}
				readsDone.Add(1)
				if err := rw.RUnlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n, err := raw.Get(bg, counter).Int(); err != nil || n != clients*writes {
		t.Fatalf("counter = %d (%v), want %d", n, err, clients*writes)
	}
	if readsDone.Load() != clients*reads {
		t.Fatalf("%d reads done, want %d", readsDone.Load(), clients*reads)
	}
	if raw.Exists(bg, name).Val() != 0 {
		t.Fatal("lock left in Redis")
	}
	if keys := raw.Keys(bg, "{"+name+"}:*").Val(); len(keys) != 0 {
		t.Fatalf("read hold timeout keys left: %v", keys)
	}
	raw.Del(bg, counter, left, right)
}
