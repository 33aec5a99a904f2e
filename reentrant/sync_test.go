package reentrant_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// replicated starts a master and one replica of it, both the test's own,
// and waits until the replica is in sync.
func replicated(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	// No delay before the first sync of a replica (Redis 7 waits 5 s
	// for more replicas to share a diskless one).
	master = redistest.Start(t, "--repl-diskless-sync-delay", "0")
	master.RequireReal(t)
	_, port, _ := strings.Cut(master.Addr, ":")
	replica = redistest.Start(t, "--replicaof", "127.0.0.1", port)
	mraw := master.Client(t)
	deadline := time.Now().Add(10 * time.Second)
	// Linked is not enough: after a diskless sync the master streams to
	// the replica, and WAIT counts it, only from its first ACK (sent
	// once a second), so wait until a write is confirmed.
	for {
		ctx := context.Background()
		if mraw.Set(ctx, "replicated", "1", 0).Err() == nil && mraw.Do(ctx, "WAIT", 1, 100).Val() == int64(1) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("replica not in sync within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	mraw.Del(context.Background(), "replicated")
	return master, replica
}

// TestSyncReplicas: with SyncReplicas an acquire returns only once the
// replica has it; when the replicas cannot confirm in time the acquire
// is undone and reported as ErrNotAcquired.
func TestSyncReplicas(t *testing.T) {
	redistest.Parallel(t)
	master, replica := replicated(t)
	bg := context.Background()
	name := redistest.Key(t)
	opts := &relock.Options{SyncReplicas: 1, SyncTimeout: 300 * time.Millisecond}
	rc, err := relock.New(master.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	mu := reentrant.New(rc, name, &reentrant.Options{Fencing: true})
	ctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	// WAIT returned, so the replica has the hold already.
	if fields := replica.Client(t).HGetAll(bg, name).Val(); len(fields) != 1 {
		t.Fatalf("replica's copy right after Lock: %v", fields)
	}
	if err := mu.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// Two replicas asked for, one exists.
	two, err := relock.New(master.Client(t), &relock.Options{SyncReplicas: 2, SyncTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer two.Close()
	start := time.Now()
	_, err = reentrant.New(two, name, nil).Lock(bg)
	if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "1 of 2 replicas") {
		t.Fatalf("Lock with too few replicas = %v, want ErrNotAcquired (1 of 2 replicas)", err)
	}
	t.Logf("refused after %v: %v", time.Since(start), err)
	if master.Client(t).Exists(bg, name).Val() != 0 {
		t.Fatal("refused acquire left its hold on the master")
	}

	// The replica stops answering.
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer replica.Resume()
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with the replica frozen = %v, want ErrNotAcquired", err)
	}
	if master.Client(t).Exists(bg, name).Val() != 0 {
		t.Fatal("refused acquire left its hold on the master")
	}
}

// TestSyncAuto: with default options an acquire on a master with a
// replica returns once the replica has it, a lock handed over by a
// release included; when the replica cannot confirm, the acquire is
// undone and reported as ErrNotAcquired. SyncOff brings back the
// acquire that waits for nothing.
func TestSyncAuto(t *testing.T) {
	redistest.Parallel(t)
	master, replica := replicated(t)
	bg := context.Background()
	name := redistest.Key(t)
	mraw, rraw := master.Client(t), replica.Client(t)
	waits := func() int64 { return commandCalls(t, mraw, "wait") }

	rc := redistest.Relock(t, master.LockClient(t), &relock.Options{SyncTimeout: 300 * time.Millisecond})
	mu := reentrant.New(rc, name, nil)
	before := waits()
	ctx := redistest.Lock(t, mu, bg)
	if fields := rraw.HGetAll(bg, name).Val(); len(fields) != 1 {
		t.Fatalf("replica's copy right after Lock with default options: %v", fields)
	}
	if n := waits() - before; n != 1 {
		t.Fatalf("one Lock sent %d WAITs, want 1", n)
	}

	// A waiter granted the lock by the release confirms the grant
	// before its Lock returns: with the replica frozen it cannot.
	other := redistest.Relock(t, master.LockClient(t), &relock.Options{SyncTimeout: 300 * time.Millisecond})
	got := make(chan error, 1)
	go func() {
		_, err := reentrant.New(other, name, nil).Lock(bg)
		got <- err
	}()
	waitersKey := "relock_lock_waiters:{" + name + "}"
	deadline := time.Now().Add(5 * time.Second)
	for mraw.ZCard(bg, waitersKey).Val() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the waiter never registered")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer replica.Resume()
	redistest.Unlock(t, mu, ctx)
	select {
	case err := <-got:
		if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "none of the master's 1 connected replicas") {
			t.Fatalf("granted Lock with the replica frozen = %v, want ErrNotAcquired (none of 1 replicas)", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("granted Lock with the replica frozen did not return")
	}
	if n := mraw.Exists(bg, name).Val(); n != 0 {
		t.Fatalf("the unconfirmed grant was left on the master: %v", mraw.HGetAll(bg, name).Val())
	}
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock with the replica frozen = %v, want ErrNotAcquired", err)
	}
	if mraw.Exists(bg, name).Val() != 0 {
		t.Fatal("refused acquire left its hold on the master")
	}

	off := redistest.Relock(t, master.LockClient(t), &relock.Options{SyncReplicas: relock.SyncOff})
	before = waits()
	start := time.Now()
	octx, err := reentrant.New(off, name, nil).TryLock(bg, 0)
	if err != nil {
		t.Fatalf("TryLock with SyncOff and the replica frozen: %v", err)
	}
	if took, n := time.Since(start), waits()-before; n != 0 || took >= 300*time.Millisecond {
		t.Fatalf("TryLock with SyncOff sent %d WAITs and took %v", n, took)
	}
	redistest.Unlock(t, reentrant.New(off, name, nil), octx)
}

// TestSyncAutoAlone: on a master with no replica and no append-only
// file the default sync sends no WAIT, and reads the master's report of
// its replicas (INFO) about once a second, not once per acquire.
func TestSyncAutoAlone(t *testing.T) {
	srv.RequireReal(t)
	bg := context.Background()
	raw := srv.Client(t)
	mu := reentrant.New(newClient(t, nil), redistest.Key(t), nil)
	waits, infos := commandCalls(t, raw, "wait"), commandCalls(t, raw, "info")
	const n = 50
	for range n {
		redistest.Unlock(t, mu, redistest.Lock(t, mu, bg))
	}
	if w := commandCalls(t, raw, "wait") - waits; w != 0 {
		t.Errorf("%d acquires without replicas sent %d WAITs", n, w)
	}
	// One round trip of three INFO sections per refresh; the test's own
	// commandCalls add one INFO each.
	if i := commandCalls(t, raw, "info") - infos - 1; i > 6 {
		t.Errorf("%d acquires sent %d INFO commands", n, i)
	}
}

// commandCalls returns how often the server behind raw has run cmd.
func commandCalls(t *testing.T, raw *redis.Client, cmd string) int64 {
	t.Helper()
	return redistest.CommandCalls(t, raw)[cmd]
}

// TestSyncOptions: bad replica options are refused.
func TestSyncOptions(t *testing.T) {
	rdb := srv.Client(t)
	for what, o := range map[string]*relock.Options{
		"negative timeout":                   {SyncReplicas: 1, SyncTimeout: -time.Second},
		"negative timeout, sync off":         {SyncReplicas: relock.SyncOff, SyncTimeout: -time.Second},
		"fractional milliseconds":            {SyncReplicas: 1, SyncTimeout: 1500 * time.Microsecond},
		"timeout past ReadTimeout":           {SyncReplicas: 1, SyncTimeout: time.Minute},
		"timeout past ReadTimeout, SyncAuto": {SyncTimeout: time.Minute},
	} {
		if _, err := relock.New(rdb, o); !errors.Is(err, relock.ErrInvalidArgument) {
			t.Errorf("%s: New = %v, want ErrInvalidArgument", what, err)
		}
	}
	// Sync off: the timeout is not used, so any whole one is accepted.
	rc, err := relock.New(rdb, &relock.Options{SyncReplicas: -3, SyncTimeout: time.Minute})
	if err != nil {
		t.Fatalf("New with sync off and a long SyncTimeout: %v", err)
	}
	rc.Close()
	// A short ReadTimeout shortens the default SyncTimeout below it.
	short := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 400 * time.Millisecond})
	defer short.Close()
	rc, err = relock.New(short, nil)
	if err != nil {
		t.Fatalf("New with default options and ReadTimeout 400ms: %v", err)
	}
	rc.Close()
}

// TestSyncPipelined: the acquires of goroutines that meet on one client
// whose master has a replica go out in pipelines that end with one WAIT,
// which confirms them all: every Lock returns with its hold on the
// replica already, and with two replicas asked for of one, every queued
// acquire fails as ErrNotAcquired and is undone.
func TestSyncPipelined(t *testing.T) {
	redistest.Parallel(t)
	master, replica := replicated(t)
	bg := context.Background()
	waits := &waitCounter{}
	rdb := master.Client(t)
	rdb.AddHook(waits)
	rc := redistest.Relock(t, rdb, &relock.Options{SyncTimeout: 300 * time.Millisecond})
	base := redistest.Key(t)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Go(func() {
			for i := range redistest.Short(30, 15) {
				name := fmt.Sprintf("%s:%d:%d", base, w, i)
				mu := reentrant.New(rc, name, nil)
				lctx, err := mu.Lock(bg)
				if err != nil {
					t.Error(err)
					return
				}
				if n := replica.Client(t).HLen(bg, name).Val(); n != 1 {
					t.Errorf("%s on the replica right after Lock: %d fields", name, n)
				}
				if err := mu.Unlock(lctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := waits.batched(); n == 0 {
		t.Errorf("no pipeline of acquires ended with a WAIT")
	}

	two := redistest.Relock(t, master.Client(t), &relock.Options{SyncReplicas: 2, SyncTimeout: 100 * time.Millisecond})
	for w := range 8 {
		wg.Go(func() {
			name := fmt.Sprintf("%s:two:%d", base, w)
			if _, err := reentrant.New(two, name, nil).Lock(bg); !errors.Is(err, relock.ErrNotAcquired) {
				t.Errorf("%s with 2 of 1 replicas: %v, want ErrNotAcquired", name, err)
			}
		})
	}
	wg.Wait()
	redistest.Eventually(t, 5*time.Second, "the undone acquires gone", func() bool {
		keys := master.Client(t).Keys(bg, base+":two:*").Val()
		return len(keys) == 0
	})
}

// waitCounter counts the pipelines that hold more than one script and
// end with WAIT.
type waitCounter struct {
	mu sync.Mutex // guards n
	n  int
}

func (h *waitCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *waitCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h *waitCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 2 && cmds[len(cmds)-1].Name() == "wait" {
			h.mu.Lock()
			h.n++
			h.mu.Unlock()
		}
		return next(ctx, cmds)
	}
}

func (h *waitCounter) batched() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}
