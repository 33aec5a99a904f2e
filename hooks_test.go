package relock_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// shaHook counts the scripts a go-redis client processes, by SHA1, alone
// or in pipelines.
type shaHook struct {
	mu   sync.Mutex // guards seen
	seen map[string]int
}

func (h *shaHook) note(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 2 || (cmd.Name() != "evalsha" && cmd.Name() != "eval") {
		return
	}
	key, _ := args[1].(string)
	if cmd.Name() == "eval" {
		key = redis.NewScript(key).Hash()
	}
	h.mu.Lock()
	h.seen[key]++
	h.mu.Unlock()
}

func (h *shaHook) count(s *redis.Script) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[s.Hash()]
}

func (h *shaHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *shaHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.note(cmd)
		return next(ctx, cmd)
	}
}

func (h *shaHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			h.note(cmd)
		}
		return next(ctx, cmds)
	}
}

// TestHooksSeeEveryCommand: a hook on the caller's go-redis client, left
// with go-redis's defaults (retries on, no context deadlines, so relock
// sends its acquires and renewals through copies of its own), sees every
// acquire, unlock and renewal relock sends; and a command the caller
// sends itself still goes through the caller's client as before.
func TestHooksSeeEveryCommand(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	srv.RequireReal(t)
	bg := context.Background()
	rdb := redis.NewClient(srv.LockOptions())
	t.Cleanup(func() { rdb.Close() })
	hook := &shaHook{seen: make(map[string]int)}
	rdb.AddHook(hook)
	const lease = 600 * time.Millisecond
	rc := redistest.Relock(t, rdb, &relock.Options{WatchdogTimeout: lease})

	name := redistest.Key(t)
	holder := reentrant.New(redistest.Relock(t, srv.LockClient(t), nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	mu := reentrant.New(rc, name, nil)
	got := make(chan context.Context, 1)
	go func() {
		lctx, err := mu.Lock(bg)
		if err != nil {
			t.Error(err)
		}
		got <- lctx
	}()
	time.Sleep(100 * time.Millisecond)
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	lctx := <-got
	time.Sleep(lease) // renewals every lease/3
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if n := hook.count(lua.Acquire()); n < 1 {
		t.Errorf("the caller's hook saw %d acquires", n)
	}
	if n := hook.count(lua.Renew()); n < 2 {
		t.Errorf("the caller's hook saw %d renewals in %v of renewals every %v", n, lease, lease/3)
	}
	if n := hook.count(lua.Unlock()); n != 1 {
		t.Errorf("the caller's hook saw %d unlocks, want 1", n)
	}
	if err := rdb.Set(bg, name, "mine", 0).Err(); err != nil {
		t.Fatalf("the caller's own command: %v", err)
	}
	if v := rdb.Get(bg, name).Val(); v != "mine" {
		t.Fatalf("the caller's own command read %q", v)
	}
	t.Logf("the caller's hook saw %d acquires, %d renewals, %d unlock", hook.count(lua.Acquire()), hook.count(lua.Renew()), hook.count(lua.Unlock()))
}
