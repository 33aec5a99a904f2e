package clustertest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// TestReadersOnCluster: on the cluster, readers on different clients share
// a read/write lock, a writer waits for the last of them, and its unlock
// wakes every waiting reader at once through sharded pub/sub; the read
// holds' timeout keys live in the lock's slot and are gone at the end.
func TestReadersOnCluster(t *testing.T) {
	c := needCluster(t)
	bg := context.Background()
	rdb := c.Client(t)
	for master, name := range namesOnEachMaster(t, c, rdb, redistest.Key(t)) {
		r1 := rwlock.New(newClient(t, c.Client(t), nil), name, nil)
		r2 := rwlock.New(newClient(t, c.Client(t), nil), name, nil)
		w := rwlock.New(newClient(t, c.Client(t), nil), name, nil)
		c1, err := r1.RLock(bg)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := r2.TryRLock(bg, 0)
		if err != nil {
			t.Fatalf("second reader on %s: %v", master, err)
		}
		got := make(chan context.Context, 1)
		go func() {
			ctx, err := w.Lock(bg)
			if err != nil {
				t.Error(err)
			}
			got <- ctx
		}()
		time.Sleep(100 * time.Millisecond)
		for _, rc := range []struct {
			rw  *rwlock.RWMutex
			ctx context.Context
		}{{r1, c1}, {r2, c2}} {
			select {
			case <-got:
				t.Fatalf("writer got in on %s while a reader held the lock", master)
			default:
			}
			if err := rc.rw.RUnlock(rc.ctx); err != nil {
				t.Fatal(err)
			}
		}
		var wctx context.Context
		select {
		case wctx = <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("writer not in on %s after the readers left", master)
		}

		// Readers wait for the writer; its unlock wakes them all at once.
		const readers = 4
		shared := newClient(t, c.Client(t), nil)
		acquired := make(chan time.Time, readers)
		var wg sync.WaitGroup
		for range readers {
			rw := rwlock.New(shared, name, nil)
			wg.Go(func() {
				ctx, err := rw.RLock(bg)
				acquired <- time.Now()
				if err == nil {
					err = rw.RUnlock(ctx)
				}
				if err != nil {
					t.Error(err)
				}
			})
		}
		time.Sleep(200 * time.Millisecond)
		released := time.Now()
		if err := w.Unlock(wctx); err != nil {
			t.Fatal(err)
		}
		for range readers {
			select {
			case at := <-acquired:
				if d := at.Sub(released); d > 2*time.Second {
					t.Fatalf("reader on %s in %v after the write unlock: not woken", master, d)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("a reader on %s was not woken by the write unlock", master)
			}
		}
		wg.Wait()
		node := c.Node(master).Client(t)
		redistest.Eventually(t, wait, "lock gone on "+master, func() bool {
			return node.Exists(bg, name).Val() == 0 && len(node.Keys(bg, "{"+name+"}:*").Val()) == 0
		})
	}
}

// TestMultiLockOnCluster: a MultiLock whose members (of three lock types)
// live on three different masters is all or nothing, and is exclusive
// between contenders on clients of their own.
func TestMultiLockOnCluster(t *testing.T) {
	c := needCluster(t)
	bg := context.Background()
	rdb := c.Client(t)
	var names []string
	for _, name := range namesOnEachMaster(t, c, rdb, redistest.Key(t)) {
		names = append(names, name)
	}
	if len(names) < 3 {
		t.Fatalf("names on %d masters, want 3", len(names))
	}
	build := func() *multilock.MultiLock {
		rc := newClient(t, c.Client(t), nil)
		ml := multilock.New(
			reentrant.New(rc, names[0], nil),
			fair.New(rc, names[1], nil),
			rwlock.New(rc, names[2], nil).Reader(),
		)
		return ml
	}
	// One member busy elsewhere: TryLock gives up holding nothing.
	busy := fair.New(newClient(t, c.Client(t), nil), names[1], nil)
	bctx, err := busy.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := build().TryLock(bg, 200*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with a member busy = %v", err)
	}
	// Keys of different slots: one EXISTS each.
	held := func() int {
		n := 0
		for _, name := range names {
			n += int(rdb.Exists(bg, name).Val())
		}
		return n
	}
	if n := held(); n != 1 {
		t.Fatalf("after the failed TryLock %d members held, want only the busy one", n)
	}
	if err := busy.Unlock(bctx); err != nil {
		t.Fatal(err)
	}

	const contenders, iterations = 4, 20
	counter := names[0] + ":counter"
	var wg sync.WaitGroup
	for range contenders {
		ml := build()
		wg.Go(func() {
			for range iterations {
				ctx, err := ml.Lock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := rdb.Get(ctx, counter).Int()
				rdb.Set(ctx, counter, n+1, 0)
				if err := ml.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n, err := rdb.Get(bg, counter).Int(); err != nil || n != contenders*iterations {
		t.Fatalf("counter = %d (%v), want %d", n, err, contenders*iterations)
	}
	rdb.Del(bg, counter)
	if n := held(); n != 0 {
		t.Fatalf("%d members left held", n)
	}
}
