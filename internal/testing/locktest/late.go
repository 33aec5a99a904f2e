package locktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// acquireScripts are every hash lock's acquire scripts.
var acquireScripts = []*redis.Script{
	lua.Acquire(), lua.FencedAcquire(), lua.NonReentrantAcquire(), lua.FairAcquire(),
	lua.SpinAcquire(), lua.RWReadAcquire(), lua.RWWriteAcquire(), lua.GroupAcquire(),
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
	hctx := redistest.Lock(t, holder, bg)

	// Retries off and deadlines on: relock runs its scripts through this
	// client, and so through the hook. Replica sync off: with it, a
	// cluster's acquires go through its masters' own clients.
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) { o.MaxRetries, o.ContextTimeoutEnabled = -1, true })
	hook := redistest.NewLate(acquireScripts...)
	rdb.AddHook(hook)
	gone := e.k.New(redistest.Relock(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff}), key, 0)
	hook.Arm(true)
	_, err := gone.TryLock(bg, 250*time.Millisecond)
	hook.Arm(false)
	if !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with every reply lost = %v, want ErrNotAcquired", err)
	}
	if free {
		redistest.Unlock(t, holder, hctx)
	}
	if n, err := hook.Play(bg, raw); err != nil || n < 2 {
		t.Fatalf("%d attempts ran late (%v), want at least 2 (a try and a wait's)", n, err)
	}
	if !free {
		redistest.Unlock(t, holder, hctx)
	}

	next := e.k.New(e.client(t, nil), key, 0)
	var nctx context.Context
	redistest.Eventually(t, 100*time.Millisecond, "a fresh TryLock(0) takes the lock", func() bool {
		nctx, err = next.TryLock(bg, 0)
		return err == nil
	})
	redistest.Unlock(t, next, nctx)
	for _, k := range []string{key, "relock_lock_waiters:{" + key + "}"} {
		if n, err := raw.Exists(bg, k).Result(); err != nil || n != 0 {
			t.Errorf("%s left behind (EXISTS %d, %v)", k, n, err)
		}
	}
	e.assertNoResidue(t, key)
}
