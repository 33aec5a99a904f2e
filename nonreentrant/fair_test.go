package nonreentrant_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/nonreentrant"
)

// fairState is what a fair lock keeps in Redis: the hash's fields, the
// queue and the waiters' deadlines.
type fairState struct {
	hash   map[string]string
	queue  []string
	scores []redis.Z
}

func readFair(t *testing.T, raw *redis.Client, name string) fairState {
	t.Helper()
	bg := context.Background()
	keys := locktest.FairResidue(name)
	return fairState{
		hash:   raw.HGetAll(bg, name).Val(),
		queue:  raw.LRange(bg, keys[0], 0, -1).Val(),
		scores: raw.ZRangeWithScores(bg, keys[1], 0, -1).Val(),
	}
}

func (s fairState) equal(o fairState) bool {
	return maps.Equal(s.hash, o.hash) && slices.Equal(s.queue, o.queue) && slices.Equal(s.scores, o.scores)
}

// TestFairReentryRefused: the holder of a FairMutex, with a waiter of
// another client queued behind it, is refused at once by Lock and
// TryLock (no wait, a wait, another FairMutex value of the same lock),
// each with an error matching relock.ErrNotReentrant; the hold, the
// queue and its deadlines stay exactly as they were, the holder's
// context lives on, and one Unlock hands the lock to the waiter.
func TestFairReentryRefused(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	rc := newClient(t, nil)
	mu := nonreentrant.NewFair(rc, name, nil)
	ctx := redistest.Lock(t, mu, bg)

	waiter := nonreentrant.NewFair(newClient(t, nil), name, nil)
	got := lockAt(waiter)
	locktest.WaitQueued(t, raw, name, waiter.Client().ID(), 1)
	before := readFair(t, raw, name)
	if n := len(before.hash); n != 1 {
		t.Fatalf("hash %v, want the holder's one field", before.hash)
	}

	for _, tc := range []struct {
		what string
		call func() error
	}{
		{"Lock", func() error { _, err := mu.Lock(ctx); return err }},
		{"TryLock(0)", func() error { _, err := mu.TryLock(ctx, 0); return err }},
		{"TryLock(1m)", func() error { _, err := mu.TryLock(ctx, time.Minute); return err }},
		{"Lock through another value", func() error { _, err := nonreentrant.NewFair(rc, name, nil).Lock(ctx); return err }},
	} {
		start := time.Now()
		err := tc.call()
		if !errors.Is(err, relock.ErrNotReentrant) || errors.Is(err, relock.ErrNotAcquired) {
			t.Errorf("%s by the holder = %v, want ErrNotReentrant alone", tc.what, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s by the holder took %v: it waited", tc.what, took)
		}
		if after := readFair(t, raw, name); !after.equal(before) {
			t.Fatalf("%s changed the lock: %+v, was %+v", tc.what, after, before)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("refusals ended the holder's context: %v", context.Cause(ctx))
	}
	if n, err := mu.HoldCount(ctx); err != nil || n != 1 {
		t.Fatalf("HoldCount = %d, %v; want 1", n, err)
	}
	redistest.Unlock(t, mu, ctx)
	redistest.Unlock(t, waiter, within(t, got, 2*time.Second, "the queued waiter after the Unlock"))
	if n := raw.Exists(bg, append(locktest.FairResidue(name), name)...).Val(); n != 0 {
		t.Fatalf("%d of the lock's keys left", n)
	}
}

// TestFairAcquireScriptRefuses pins the acquire's non-reentrant mode
// (fair_acquire.lua's ARGV[6] "1"): the holder's second acquire, whether
// a try or a wait, is the error NON_REENTRANT_REACQUIRE, Redisson's, and
// leaves the hold and its TTL unchanged; without ARGV[6] the same call
// counts a second hold, as the fair lock's re-entry does.
func TestFairAcquireScriptRefuses(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	keys := append([]string{name}, locktest.FairResidue(name)...)
	keys = append(keys, "redisson_lock__channel:{"+name+"}")
	const field = "0193f7a2-77c1-8d3e-9a41-2b6c0e5d4f18:1" // a relock client's (version 8)
	acquire := func(mode string, extra ...any) (any, error) {
		args := append([]any{30000, field, 300000, mode, "PUBLISH"}, extra...)
		return lua.FairAcquire().Run(bg, raw, keys, args...).Result()
	}
	if n, err := acquire("0", "1"); err != nil || n != int64(1) {
		t.Fatalf("acquire of a free lock = %v, %v; want 1", n, err)
	}
	raw.PExpire(bg, name, 20*time.Second) // a TTL a refusal must leave
	for _, mode := range []string{"0", "1"} {
		_, err := acquire(mode, "1")
		if err == nil || !strings.Contains(err.Error(), "NON_REENTRANT_REACQUIRE") {
			t.Fatalf("the holder's acquire in mode %s = %v, want NON_REENTRANT_REACQUIRE", mode, err)
		}
		if h := raw.HGet(bg, name, field).Val(); h != "1" {
			t.Fatalf("hold count %q after a refusal, want 1", h)
		}
		if pttl := raw.PTTL(bg, name).Val(); pttl > 20*time.Second || pttl < 19*time.Second {
			t.Fatalf("PTTL %v after a refusal, want the 20s left as it was", pttl)
		}
	}
	if n, err := acquire("1"); err != nil || n != int64(1) || raw.HGet(bg, name, field).Val() != "2" {
		t.Fatalf("reentrant acquire = %v, %v, count %s; want 1 and count 2", n, err, raw.HGet(bg, name, field).Val())
	}
	raw.Del(bg, keys...)
}
