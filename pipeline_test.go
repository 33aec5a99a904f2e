package relock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// batchHook records the sizes of the script pipelines a go-redis client
// sends, and counts the scripts it sends alone.
type batchHook struct {
	mu      sync.Mutex // guards batches and alone
	batches []int
	alone   int
}

func (h *batchHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *batchHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" {
			h.mu.Lock()
			h.alone++
			h.mu.Unlock()
		}
		return next(ctx, cmd)
	}
}

func (h *batchHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, cmd := range cmds {
			if cmd.Name() == "evalsha" {
				n++
			}
		}
		h.mu.Lock()
		h.batches = append(h.batches, n)
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

// largest returns the largest batch seen and the scripts sent alone.
func (h *batchHook) largest() (batch, alone int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.batches {
		batch = max(batch, n)
	}
	return batch, h.alone
}

// pipeEnv is a client on a real server whose go-redis client a batchHook
// watches.
func pipeEnv(t *testing.T, opts *relock.Options) (*relock.Client, *batchHook, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	srv.RequireReal(t)
	rdb := redis.NewClient(srv.LockOptions())
	t.Cleanup(func() { rdb.Close() })
	hook := &batchHook{}
	rdb.AddHook(hook)
	return redistest.Relock(t, rdb, opts), hook, srv
}

// churnNames has workers goroutines lock and unlock their own names,
// rounds times each, with mutexes made by mk, and fails t on any error.
func churnNames(t *testing.T, workers, rounds int, mk func(name string) relock.Locker) {
	t.Helper()
	base := redistest.Key(t)
	redistest.Churn(t, workers, rounds, func(w, i int) relock.Locker { return mk(fmt.Sprintf("%s:%d:%d", base, w, i%5)) })
}

// TestPipelining: the acquires and unlocks of goroutines that meet on
// one client go out in pipelines, each caller getting its own reply; a
// lone caller's go out alone; DisablePipelining sends none in a
// pipeline. The locks are free at the end.
func TestPipelining(t *testing.T) {
	redistest.Parallel(t)
	for _, kind := range []string{"reentrant", "fair"} {
		t.Run(kind, func(t *testing.T) {
			rc, hook, srv := pipeEnv(t, nil)
			mk := func(name string) relock.Locker { return reentrant.New(rc, name, nil) }
			if kind == "fair" {
				mk = func(name string) relock.Locker { return fair.New(rc, name, nil) }
			}
			churnNames(t, 1, 20, mk)
			if batch, alone := hook.largest(); batch != 0 || alone < 40 {
				t.Fatalf("a lone caller: largest batch %d, %d scripts alone; want none in batches, 40 alone", batch, alone)
			}
			churnNames(t, 32, redistest.Short(200, 60), mk)
			if batch, _ := hook.largest(); batch < 2 {
				t.Errorf("32 goroutines: largest batch of scripts %d, want some pipelined", batch)
			}
			if keys := srv.Client(t).Keys(context.Background(), redistest.Key(t)+"*").Val(); len(keys) > 0 {
				t.Errorf("left in Redis: %v", keys)
			}
		})
	}
	t.Run("disabled", func(t *testing.T) {
		rc, hook, _ := pipeEnv(t, &relock.Options{DisablePipelining: true})
		churnNames(t, 32, redistest.Short(100, 30), func(name string) relock.Locker { return reentrant.New(rc, name, nil) })
		if batch, _ := hook.largest(); batch != 0 {
			t.Errorf("DisablePipelining: a batch of %d scripts", batch)
		}
	})
}

// TestPipelineDeadlines: callers queued behind calls in flight to a
// server that stopped answering each return by their own deadline, the
// short ones while the long ones still wait; once the server answers,
// the long ones get their locks, and what the short ones' acquires did
// when they ran late is undone: every lock is free again.
func TestPipelineDeadlines(t *testing.T) {
	redistest.Parallel(t)
	// No replica sync: nothing but the acquires waits for the server.
	rc, hook, srv := pipeEnv(t, &relock.Options{SyncReplicas: relock.SyncOff})
	base := redistest.Key(t)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = srv.Resume()
		}
	}()
	const short, long = 300 * time.Millisecond, 4 * time.Second
	type result struct {
		name string
		took time.Duration
		err  error
	}
	results := make(chan result, 12)
	var wg sync.WaitGroup
	for i := range 12 {
		// Two in flight first, then the queue; a third of those queued
		// give up early.
		d := long
		if i >= 2 && i%3 == 0 {
			d = short
		}
		name := fmt.Sprintf("%s:%d", base, i)
		wg.Go(func() {
			mu := reentrant.New(rc, name, nil)
			ctx, cancel := context.WithTimeout(context.Background(), d)
			defer cancel()
			start := time.Now()
			lctx, err := mu.Lock(ctx)
			took := time.Since(start)
			if err == nil {
				err = mu.Unlock(lctx)
			}
			results <- result{name: fmt.Sprint(d), took: took, err: err}
		})
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(short + 300*time.Millisecond)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	wg.Wait()
	close(results)
	for r := range results {
		switch r.name {
		case fmt.Sprint(short):
			if !errors.Is(r.err, context.DeadlineExceeded) || r.took > short+150*time.Millisecond {
				t.Errorf("short deadline: %v after %v; want DeadlineExceeded by %v", r.err, r.took, short)
			}
		default:
			if r.err != nil {
				t.Errorf("long deadline: %v after %v", r.err, r.took)
			}
		}
	}
	if batch, _ := hook.largest(); batch < 2 {
		t.Errorf("largest batch %d: the queued acquires did not go out together", batch)
	}
	// The short deadlines ended while their acquires were queued behind
	// the paused server: those were never sent, so nothing was undone
	// and no attempt recorded as given up.
	raw := srv.Client(t)
	for i := 3; i < 12; i += 3 {
		gone := "relock_lock_gone:{" + fmt.Sprintf("%s:%d", base, i) + "}"
		if n := raw.Exists(context.Background(), gone).Val(); n != 0 {
			t.Errorf("%s exists: an acquire never sent was undone", gone)
		}
	}
	check := redistest.Relock(t, srv.LockClient(t), nil)
	redistest.Eventually(t, 3*time.Second, "every lock free", func() bool {
		for i := range 12 {
			locked, err := reentrant.New(check, fmt.Sprintf("%s:%d", base, i), nil).IsLocked(context.Background())
			if err != nil || locked {
				return false
			}
		}
		return true
	})
}
