package faulttest_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestLatency: four Clients, each behind a proxy adding 20, 30, 40 or
// 50ms (+/- 10ms jitter) each way, contend for one lock. Inside the lock
// each does a read-modify-write of a Redis counter through its own slow
// connection (two round trips, 40-120ms: a wide window for a second
// holder), and an in-process check that nobody else is inside. The
// counter ends exact and nobody is ever inside twice.
//
// Waiters are woken, not left to sleep out the lease: the lease is 30s,
// and the time from one holder's Unlock call to the next holder's Lock
// return (the next holder was already waiting) stays under 2s, far
// below it; it is a publish and an acquire across slow links, about
// 100-250ms.
func TestLatency(t *testing.T) {
	requireReal(t)
	const each = 6
	latencies := []time.Duration{20 * time.Millisecond, 30 * time.Millisecond, 40 * time.Millisecond, 50 * time.Millisecond}
	const jitter = 10 * time.Millisecond
	bg := context.Background()
	name := redistest.Key(t)
	counter := name + ":counter"

	type hold struct {
		call, ret, unlockCall time.Time
	}
	holds := make([][]hold, len(latencies))
	var inside, twice atomic.Int32
	var wg sync.WaitGroup
	start := time.Now()
	for i, lat := range latencies {
		x := newProxy(t)
		must(t, x.SetLatency(lat, jitter))
		rdb := newRedis(t, x.Addr)
		rc, err := relock.New(rdb, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		mu := reentrant.New(rc, name, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				h := hold{call: time.Now()}
				lctx, err := mu.Lock(bg)
				h.ret = time.Now()
				if err != nil {
					t.Errorf("client %d: Lock: %v", i, err)
					return
				}
				if inside.Add(1) != 1 {
					twice.Add(1)
				}
				n, _ := rdb.Get(lctx, counter).Int()
				if err := rdb.Set(lctx, counter, n+1, 0).Err(); err != nil {
					t.Errorf("client %d: SET: %v", i, err)
				}
				inside.Add(-1)
				h.unlockCall = time.Now()
				if err := mu.Unlock(lctx); err != nil {
					t.Errorf("client %d: Unlock: %v", i, err)
				}
				holds[i] = append(holds[i], h)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	raw := newRedis(t, srv.Addr)
	n, err := raw.Get(bg, counter).Int()
	if err != nil {
		t.Fatal(err)
	}
	total := each * len(latencies)
	if n != total || twice.Load() != 0 {
		t.Fatalf("counter %d after %d holds; %d times a second holder was inside", n, total, twice.Load())
	}

	var all []hold
	for _, h := range holds {
		all = append(all, h...)
	}
	slices.SortFunc(all, func(a, b hold) int { return a.ret.Compare(b.ret) })
	var handoffs []time.Duration
	for i := 1; i < len(all); i++ {
		prev, next := all[i-1], all[i]
		if next.call.Before(prev.unlockCall) {
			handoffs = append(handoffs, next.ret.Sub(prev.unlockCall))
		}
	}
	if len(handoffs) == 0 {
		t.Fatal("no holder ever waited: the test contended for nothing")
	}
	slices.Sort(handoffs)
	worst := handoffs[len(handoffs)-1]
	t.Logf("%d holds in %v, counter exact; %d handoffs to a waiting client (Unlock call -> next Lock return): median %v, max %v",
		total, took.Round(time.Millisecond), len(handoffs), handoffs[len(handoffs)/2].Round(time.Millisecond), worst.Round(time.Millisecond))
	if worst > 2*time.Second {
		t.Fatalf("a waiter took %v to get a released lock: it slept instead of being woken (lease 30s)", worst)
	}
}
