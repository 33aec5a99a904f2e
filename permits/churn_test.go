package permits_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// churnStats count what the churn's goroutines did.
type churnStats struct {
	acquired, notAcquired, other, released atomic.Int64
	// held counts the permits taken and not yet given back; over records
	// that it went past the semaphore's count.
	held, over atomic.Int64

	mu     sync.Mutex // guards errors
	errors []string   // the first unexpected errors
}

func (s *churnStats) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errors) < 5 {
		s.errors = append(s.errors, fmt.Sprintf(format, args...))
	}
}

// TestChurn is the load a service under churn puts on one semaphore: 4
// clients, each as its own process, of 2 goroutines each, mixing
// TryAcquire waits and Acquire deadlines of 0-3 ms (which cut acquires'
// reads, so that their undos race the acquires on the server),
// cancellations from another goroutine, holds of 0-1.5 ms and releases.
// Leases are the watchdog's 30 s: a permit a late acquire leaves would
// stay long past the checks. No more permits are held at once than the
// semaphore has; once everything stopped, within 2 s the count is whole,
// no permit and no registration is left, and a fresh TryAcquire(0) takes
// a permit at once.
func TestChurn(t *testing.T) {
	srv.RequireReal(t)
	redistest.SkipShort(t, "the churn runs for a second and more")
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	const n, clients, goroutines = 3, 4, 2
	newSemaphore(t, newClient(t, nil), name, n, nil)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)

	var st churnStats
	end := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range clients {
		s := permits.New(newClient(t, nil), name, nil)
		for g := range goroutines {
			rng := rand.New(rand.NewPCG(seed, uint64(i*goroutines+g)))
			wg.Go(func() { churnLoop(s, n, rng, end, &st) })
		}
	}
	wg.Wait()
	t.Logf("%d acquired, %d not acquired, %d other errors, %d released; %d acquires undone",
		st.acquired.Load(), st.notAcquired.Load(), st.other.Load(), st.released.Load(), raw.ZCard(bg, goneOf(name)).Val())
	for _, e := range st.errors {
		t.Error(e)
	}
	if st.over.Load() > 0 {
		t.Errorf("more than %d permits held at once %d times", n, st.over.Load())
	}
	if st.acquired.Load() == 0 || st.notAcquired.Load() == 0 {
		t.Error("the churn took no permit or gave up no acquire: it proved nothing")
	}

	var left []string
	deadline := time.Now().Add(2 * time.Second)
	for {
		left = churnLeft(t, raw, name, n)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Fatalf("2s after the churn: %s", strings.Join(left, "; "))
	}
	fresh := permits.New(newClient(t, nil), name, nil)
	p, err := fresh.TryAcquire(bg, 0)
	if err != nil {
		t.Fatalf("a fresh TryAcquire(0) after the churn: %v", err)
	}
	releaseT(t, p)
}

// churnLoop is one goroutine's churn on s, of n permits, until end, and
// at most 20000 rounds.
func churnLoop(s *permits.Semaphore, n int64, rng *rand.Rand, end time.Time, st *churnStats) {
	bg := context.Background()
	for range 20000 {
		if time.Now().After(end) {
			return
		}
		wait := time.Duration(rng.IntN(3000)) * time.Microsecond
		var p *permits.Permit
		var err error
		switch rng.IntN(3) {
		case 0:
			p, err = s.TryAcquire(bg, wait)
		case 1:
			ctx, cancel := context.WithTimeout(bg, wait)
			p, err = s.Acquire(ctx)
			cancel()
		default:
			ctx, cancel := context.WithCancel(bg)
			t := time.AfterFunc(wait, cancel)
			p, err = s.Acquire(ctx)
			t.Stop()
			cancel()
		}
		switch {
		case errors.Is(err, relock.ErrNotAcquired):
			st.notAcquired.Add(1)
			continue
		case err != nil:
			st.other.Add(1)
			st.fail("Acquire: %v", err)
			continue
		}
		st.acquired.Add(1)
		if st.held.Add(1) > n {
			st.over.Add(1)
		}
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
		st.held.Add(-1)
		if err := p.Release(bg); err != nil {
			st.fail("Release(%s): %v", p.ID(), err)
			continue
		}
		st.released.Add(1)
	}
}

// churnLeft describes what of semaphore name, of n permits, is not as a
// churn that stopped must leave it: the count other than n, permits
// held, waiters registered or a watcher appointed. (Relock's record of
// given-up permit ids may stay: it has a TTL.)
func churnLeft(t testing.TB, raw *redis.Client, name string, n int64) []string {
	t.Helper()
	bg := context.Background()
	var left []string
	if got, err := raw.Get(bg, name).Int64(); err != nil || got != n {
		left = append(left, fmt.Sprintf("count %d (%v), want %d", got, err, n))
	}
	for _, k := range []string{timeoutOf(name), registryOf(name), watcherOf(name)} {
		if raw.Exists(bg, k).Val() != 0 {
			left = append(left, fmt.Sprintf("%s (PTTL %v): %v", k, raw.PTTL(bg, k).Val(), lateLeft(raw, k)))
		}
	}
	return left
}

// TestChurnCatchesLeak: what the churn checks after its load finds a
// permit that a late acquire took (the id in the permits ZSET, the count
// one lower) and a waiter registered late, and lets relock's record of
// given-up ids be.
func TestChurnCatchesLeak(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	newSemaphore(t, newClient(t, nil), name, 3, nil)
	if left := churnLeft(t, raw, name, 3); len(left) != 0 {
		t.Fatalf("a semaphore at rest: %q, want nothing", left)
	}
	id := strings.Repeat("\x07", 16)
	raw.DecrBy(bg, name, 1)
	raw.ZAdd(bg, timeoutOf(name), redis.Z{Score: float64(serverMillis(t, raw) + 30000), Member: id})
	raw.ZAdd(bg, registryOf(name), redis.Z{Score: 1, Member: "00000000-0000-8000-8000-000000000000:p1:1"})
	raw.ZAdd(bg, goneOf(name), redis.Z{Score: 1, Member: strings.Repeat("\x08", 16)})
	defer raw.Del(bg, timeoutOf(name), registryOf(name), goneOf(name))
	left := churnLeft(t, raw, name, 3)
	if len(left) != 3 || !strings.HasPrefix(left[0], "count 2") ||
		!strings.HasPrefix(left[1], timeoutOf(name)) || !strings.HasPrefix(left[2], registryOf(name)) {
		t.Fatalf("churnLeft = %q, want the count, the permit and the registration", left)
	}
}
