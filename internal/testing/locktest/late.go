package locktest

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/scripts"
)

// acquireScripts are the digests of every hash lock's acquire script.
var acquireScripts = []string{
	scripts.Acquire().Hash(), scripts.FencedAcquire().Hash(), scripts.NonReentrantAcquire().Hash(),
	scripts.FairAcquire().Hash(), scripts.SpinAcquire().Hash(), scripts.RWReadAcquire().Hash(),
	scripts.RWWriteAcquire().Hash(), scripts.GroupAcquire().Hash(),
}

// A lateHook loses the replies of a client's acquire attempts while it is
// armed: it keeps each attempt's command instead of sending it, and fails
// the call as a dropped connection would (io.EOF). Play then sends the
// kept commands, as the server runs commands whose replies were lost:
// late, after whatever was sent since on other connections.
type lateHook struct {
	mu    sync.Mutex // guards armed and kept
	armed bool
	kept  [][]any
}

func (h *lateHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *lateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) < 2 || cmd.Name() != "evalsha" {
			return next(ctx, cmd)
		}
		sha, _ := args[1].(string)
		h.mu.Lock()
		keep := h.armed && slices.Contains(acquireScripts, sha)
		if keep {
			h.kept = append(h.kept, slices.Clone(args))
		}
		h.mu.Unlock()
		if !keep {
			return next(ctx, cmd)
		}
		cmd.SetErr(io.EOF)
		return io.EOF
	}
}

func (h *lateHook) arm(on bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = on
}

// play sends the kept commands through rdb, in the order they were made,
// and reports how many there were.
func (h *lateHook) play(t testing.TB, rdb redis.UniversalClient) int {
	t.Helper()
	h.mu.Lock()
	kept := h.kept
	h.kept = nil
	h.mu.Unlock()
	for _, args := range kept {
		if err := rdb.Do(context.Background(), args...).Err(); err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("late %v: %v", args[:3], err)
		}
	}
	return len(kept)
}

// lateAttempts: a wait whose attempts' replies were all lost gives up,
// and then every one of those attempts runs on the server, late: after
// the wait's undo and give-up, and (registers) while the lock is still
// held or (takes) once it is free. None of them may leave the gone
// caller holding the lock, queued or registered, so a fresh TryLock(0)
// succeeds as soon as the holder unlocks. This is the order Redis's
// MONITOR showed for a waiter whose deadline cut its acquire's read: its
// give-up ran, then its acquire registered it, then the holder's release
// granted the lock to the registered waiter, who was gone, and the lock
// stayed held for a whole lease.
func lateAttempts(t *testing.T, e *env) {
	for _, free := range []bool{false, true} {
		name := "registers"
		if free {
			name = "takes"
		}
		t.Run(name, func(t *testing.T) { lateAttempt(t, e, free) })
	}
}

func lateAttempt(t *testing.T, e *env, free bool) {
	bg := context.Background()
	key := redistest.Key(t)
	raw := e.redis(t)
	holder := e.k.New(e.client(t, nil), key, 0)
	hctx := lockT(t, holder, bg)

	// Retries off and deadlines on: relock runs its scripts through this
	// client, and so through the hook. Replica sync off: with it, a
	// cluster's acquires go through its masters' own clients.
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) { o.MaxRetries, o.ContextTimeoutEnabled = -1, true })
	hook := &lateHook{}
	rdb.AddHook(hook)
	gone := e.k.New(redistest.Relock(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff}), key, 0)
	hook.arm(true)
	_, err := gone.TryLock(bg, 250*time.Millisecond)
	hook.arm(false)
	if !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with every reply lost = %v, want ErrNotAcquired", err)
	}
	if free {
		unlockT(t, holder, hctx)
	}
	if n := hook.play(t, raw); n < 2 {
		t.Fatalf("%d attempts ran late, want at least 2 (a try and a wait's)", n)
	}
	if !free {
		unlockT(t, holder, hctx)
	}

	next := e.k.New(e.client(t, nil), key, 0)
	var nctx context.Context
	redistest.Eventually(t, 100*time.Millisecond, "a fresh TryLock(0) takes the lock", func() bool {
		nctx, err = next.TryLock(bg, 0)
		return err == nil
	})
	unlockT(t, next, nctx)
	for _, k := range []string{key, "relock_lock_waiters:{" + key + "}"} {
		if n, err := raw.Exists(bg, k).Result(); err != nil || n != 0 {
			t.Errorf("%s left behind (EXISTS %d, %v)", k, n, err)
		}
	}
	e.assertNoResidue(t, key)
}
