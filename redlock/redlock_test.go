package redlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/redlock"
)

// TestQuorum: with 5 masters the lock is taken with all up and with 2
// down, and refused with 3 down, leaving no record on the live ones.
func TestQuorum(t *testing.T) {
	redistest.Parallel(t)
	servers := startServers(t, 5)
	name := redistest.Key(t)
	rl := redlock.New(clientsOn(t, servers, nil), name, nil)
	if rl.Quorum() != 3 {
		t.Fatalf("quorum of 5 = %d", rl.Quorum())
	}
	lockUnlock := func(live int) {
		t.Helper()
		ctx, err := rl.Lock(context.Background())
		if err != nil {
			t.Fatalf("%d masters up: %v", live, err)
		}
		if n := records(t, servers, name); n != live {
			t.Fatalf("%d masters up: record on %d", live, n)
		}
		if err := rl.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if n := records(t, servers, name); n != 0 {
			t.Fatalf("record left on %d masters after Unlock", n)
		}
	}
	lockUnlock(5)
	servers[3].Kill()
	servers[4].Kill()
	lockUnlock(3)
	servers[2].Kill()
	_, err := rl.TryLock(context.Background(), 500*time.Millisecond)
	if !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with 2 of 5 up = %v, want ErrNotAcquired", err)
	}
	t.Logf("with 3 masters down: %v", err)
	if n := records(t, servers[:2], name); n != 0 {
		t.Fatalf("failed attempts left a record on %d live masters", n)
	}
}

// TestRestartedMaster: a master restarted empty mid-hold gives a second
// contender one vote, not a quorum, and the holder keeps the lock.
func TestRestartedMaster(t *testing.T) {
	redistest.Parallel(t)
	servers := startServers(t, 5)
	name := redistest.Key(t)
	opts := &relock.Options{WatchdogTimeout: time.Second}
	holder := redlock.New(clientsOn(t, servers, opts), name, nil)
	hctx, err := holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := servers[0].Restart(); err != nil {
		t.Fatal(err)
	}
	other := redlock.New(clientsOn(t, servers, opts), name, nil)
	if _, err := other.TryLock(context.Background(), 700*time.Millisecond); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("second contender after a restart = %v, want ErrNotAcquired", err)
	}
	// Several renewal rounds later the holder still holds a quorum.
	time.Sleep(time.Second)
	if hctx.Err() != nil {
		t.Fatalf("holder lost the lock: %v", context.Cause(hctx))
	}
	if n := records(t, servers, name); n != 4 {
		t.Fatalf("records on %d masters, want the holder's 4", n)
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
}

// TestRenewalLosesMajority: when two of three masters stop answering, the
// context is cancelled before the records on them can have expired.
func TestRenewalLosesMajority(t *testing.T) {
	redistest.Parallel(t)
	servers := startServers(t, 3)
	const timeout = time.Second
	rl := redlock.New(clientsOn(t, servers, &relock.Options{WatchdogTimeout: timeout}), redistest.Key(t), nil)
	ctx, err := rl.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // a renewal round
	for _, s := range servers[1:] {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Resume() })
	}
	paused := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(3 * timeout):
		t.Fatal("context not cancelled with a majority unreachable")
	}
	took := time.Since(paused)
	t.Logf("cancelled %v after two of three masters stopped answering (lease %v)", took, timeout)
	if took > timeout {
		t.Fatalf("cancelled %v after the pause: the records may have expired first", took)
	}
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(ctx))
	}
}

// TestReentrancy: a Lock with the returned context re-enters on every
// master; the inner Unlock keeps the lock, the outer releases it.
func TestReentrancy(t *testing.T) {
	name := redistest.Key(t)
	rcs := clientsOn(t, shared[:], nil)
	rl := redlock.New(rcs, name, nil)
	ctx, err := rl.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	inner, err := rl.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range shared {
		fields := s.Client(t).HGetAll(context.Background(), name).Val()
		if len(fields) != 1 || fields[rcs[i].ID()+":"+ownerOf(t, fields)] != "2" {
			t.Fatalf("master %d after the nested Lock: %v, want the owner's count 2", i, fields)
		}
	}
	other := redlock.New(clientsOn(t, shared[:], nil), name, nil)
	if _, err := other.TryLock(context.Background(), 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("another owner's TryLock = %v", err)
	}
	if err := rl.Unlock(inner); err != nil || ctx.Err() != nil {
		t.Fatalf("inner Unlock = %v, context %v", err, ctx.Err())
	}
	if err := rl.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() == nil || records(t, shared[:], name) != 0 {
		t.Fatal("the last Unlock left the lock")
	}
	if err := rl.Unlock(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("extra Unlock = %v, want ErrNotHeld", err)
	}
}

// ownerOf returns the owner part of the one field in fields.
func ownerOf(t *testing.T, fields map[string]string) string {
	t.Helper()
	for f := range fields {
		if i := len(f) - 1; i > 0 {
			for j := len(f) - 1; j >= 0; j-- {
				if f[j] == ':' {
					return f[j+1:]
				}
			}
		}
	}
	t.Fatalf("no owner field in %v", fields)
	return ""
}

// TestFixedLease: the context's deadline is the end of the validity.
func TestFixedLease(t *testing.T) {
	const lease = 2 * time.Second
	rl := redlock.New(clientsOn(t, shared[:], nil), redistest.Key(t), &redlock.Options{Lease: lease})
	start := time.Now()
	ctx, err := rl.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dl, ok := ctx.Deadline()
	drift := time.Duration(float64(lease)*redlock.DefaultDriftFactor) + 2*time.Millisecond
	if !ok || dl.After(start.Add(lease-drift)) {
		t.Fatalf("deadline %v (set %v), want at most start + lease - drift = %v", dl, ok, start.Add(lease-drift))
	}
	if pttl := shared[0].Client(t).PTTL(context.Background(), rl.Name()).Val(); pttl <= lease-time.Second || pttl > lease {
		t.Fatalf("record PTTL %v, want the %v lease", pttl, lease)
	}
	if err := rl.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestExclusion: 10 contenders, each with its own clients on the five
// masters, do read-sleep-write on a counter under the RedLock.
func TestExclusion(t *testing.T) {
	const contenders, iterations = 10, 5
	name := redistest.Key(t)
	counter := name + ":counter"
	raw := shared[0].Client(t)
	var wg sync.WaitGroup
	for range contenders {
		rl := redlock.New(clientsOn(t, shared[:], nil), name, nil)
		wg.Go(func() {
			for range iterations {
				ctx, err := rl.Lock(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				n, _ := raw.Get(ctx, counter).Int()
				time.Sleep(time.Millisecond)
				raw.Set(ctx, counter, n+1, 0)
				if err := rl.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n, err := raw.Get(context.Background(), counter).Int(); err != nil || n != contenders*iterations {
		t.Fatalf("counter = %d (%v), want %d", n, err, contenders*iterations)
	}
	raw.Del(context.Background(), counter)
	if n := records(t, shared[:], name); n != 0 {
		t.Fatalf("records left on %d masters", n)
	}
}

// TestBadInput: a RedLock made of what cannot work refuses every call.
func TestBadInput(t *testing.T) {
	rcs := clientsOn(t, shared[:3], nil)
	closed, err := relock.New(shared[3].Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	for what, tc := range map[string]struct {
		name    string
		clients []*relock.Client
		opts    *redlock.Options
		want    error
	}{
		"empty name":           {"", rcs, nil, relock.ErrInvalidName},
		"no clients":           {"x", nil, nil, relock.ErrInvalidArgument},
		"nil client":           {"x", []*relock.Client{rcs[0], nil}, nil, relock.ErrInvalidArgument},
		"same master twice":    {"x", []*relock.Client{rcs[0], clientsOn(t, shared[:1], nil)[0]}, nil, relock.ErrInvalidArgument},
		"negative lease":       {"x", rcs, &redlock.Options{Lease: -time.Second}, relock.ErrInvalidArgument},
		"node timeout ≥ lease": {"x", rcs, &redlock.Options{Lease: 50 * time.Millisecond, NodeTimeout: 50 * time.Millisecond}, relock.ErrInvalidArgument},
		"retry max < min":      {"x", rcs, &redlock.Options{RetryMin: time.Second, RetryMax: time.Millisecond}, relock.ErrInvalidArgument},
		"drift factor 1":       {"x", rcs, &redlock.Options{DriftFactor: 1}, relock.ErrInvalidArgument},
	} {
		rl := redlock.New(tc.clients, tc.name, tc.opts)
		if _, err := rl.Lock(context.Background()); !errors.Is(err, tc.want) {
			t.Errorf("%s: Lock = %v; want %v", what, err, tc.want)
		}
		if _, err := rl.TryLock(context.Background(), 0); !errors.Is(err, tc.want) {
			t.Errorf("%s: TryLock = %v; want %v", what, err, tc.want)
		}
		if err := rl.Unlock(relock.WithNewOwner(context.Background())); !errors.Is(err, tc.want) {
			t.Errorf("%s: Unlock = %v; want %v", what, err, tc.want)
		}
	}
	rl := redlock.New([]*relock.Client{rcs[0], closed}, "x", nil)
	if _, err := rl.Lock(context.Background()); !errors.Is(err, relock.ErrClosed) {
		t.Errorf("Lock with a closed client = %v, want ErrClosed", err)
	}
	if _, err := rl.TryLock(context.Background(), -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("TryLock(-1s) = %v", err)
	}
	if err := rl.Unlock(context.Background()); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Unlock without an owner = %v", err)
	}
}
