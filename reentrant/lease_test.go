package reentrant_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestWatchdogKeepsLock: with a 1s watchdog a held lock outlives 5s.
func TestWatchdogKeepsLock(t *testing.T) {
	rc := newClient(t, &relock.Options{WatchdogTimeout: time.Second})
	raw := srv.Client(t)
	mu := reentrant.New(rc, redistest.Key(t), nil)
	ctx := lockT(t, mu, context.Background())
	time.Sleep(5 * time.Second)
	if ctx.Err() != nil {
		t.Fatalf("lock context ended: %v", context.Cause(ctx))
	}
	if pttl := raw.PTTL(context.Background(), mu.Name()).Val(); pttl <= 0 || pttl > time.Second {
		t.Fatalf("PTTL after 5s = %v, want within the 1s lease", pttl)
	}
	unlockT(t, mu, ctx)
}

// TestWatchdogLossDeleted: deleting the key cancels the holder's context
// with cause ErrLockLost within a renewal interval.
func TestWatchdogLossDeleted(t *testing.T) {
	rc := newClient(t, &relock.Options{WatchdogTimeout: time.Second})
	raw := srv.Client(t)
	mu := reentrant.New(rc, redistest.Key(t), nil)
	ctx := lockT(t, mu, context.Background())
	inner := lockT(t, mu, ctx)
	deleted := time.Now()
	raw.Del(context.Background(), mu.Name())
	select {
	case <-inner.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("lock context not cancelled after the key was deleted")
	}
	took := time.Since(deleted)
	t.Logf("loss signalled %v after the delete (renewal interval 333ms)", took)
	// One interval is 333ms; allow scheduling slack on a loaded machine.
	if took > 333*time.Millisecond+500*time.Millisecond {
		t.Fatalf("loss signalled after %v, want within about one renewal interval", took)
	}
	for _, c := range []context.Context{ctx, inner} {
		if !errors.Is(context.Cause(c), relock.ErrLockLost) {
			t.Fatalf("cause %v, want ErrLockLost", context.Cause(c))
		}
	}
	if err := mu.Unlock(inner); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock of a lost lock = %v, want ErrNotHeld", err)
	}
}

// TestWatchdogLossUnreachable: when Redis stops answering, the holder is
// told no later than the lease's end on the server.
func TestWatchdogLossUnreachable(t *testing.T) {
	s := redistest.Start(t)
	s.RequireReal(t)
	const timeout = time.Second
	rc := newClientOn(t, s, &relock.Options{WatchdogTimeout: timeout})
	mu := reentrant.New(rc, redistest.Key(t), nil)
	ctx := lockT(t, mu, context.Background())
	time.Sleep(500 * time.Millisecond) // let a renewal or two succeed
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	t.Cleanup(func() { _ = s.Resume() })
	select {
	case <-ctx.Done():
	case <-time.After(3 * timeout):
		t.Fatal("lock context not cancelled while Redis was unreachable")
	}
	// The last renewal that succeeded was sent before the pause, so the
	// server keeps the lock until at most paused + timeout.
	took := time.Since(paused)
	t.Logf("loss signalled %v after Redis stopped answering (lease %v)", took, timeout)
	if took > timeout {
		t.Fatalf("loss signalled %v after the pause, after the lease could have ended", took)
	}
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(ctx))
	}
}

// pipelineCounter counts script calls sent alone (cmds) and in pipelines
// (pipes, piped).
type pipelineCounter struct{ pipes, cmds, piped atomic.Int64 }

func isScript(cmd redis.Cmder) bool { return cmd.Name() == "evalsha" || cmd.Name() == "eval" }

func (p *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if isScript(cmd) {
			p.cmds.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, c := range cmds {
			if isScript(c) {
				n++
			}
		}
		if n > 0 {
			p.pipes.Add(1)
			p.piped.Add(int64(n))
		}
		return next(ctx, cmds)
	}
}

// TestWatchdogBatches: 1000 held locks cost a pipeline per round, not
// 1000 round trips.
func TestWatchdogBatches(t *testing.T) {
	rdb := srv.Client(t)
	count := &pipelineCounter{}
	rdb.AddHook(count)
	const timeout = 1500 * time.Millisecond // a round every 500ms
	rc, err := relock.New(rdb, &relock.Options{WatchdogTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	base := redistest.Key(t)
	mus := make([]*reentrant.Mutex, 1000)
	ctxs := make([]context.Context, len(mus))
	for i := range mus {
		mus[i] = reentrant.New(rc, fmt.Sprintf("%s:%d", base, i), nil)
		ctxs[i] = lockT(t, mus[i], context.Background())
	}
	cmds0, pipes0, piped0 := count.cmds.Load(), count.pipes.Load(), count.piped.Load()
	time.Sleep(2 * timeout)
	cmds, pipes, piped := count.cmds.Load()-cmds0, count.pipes.Load()-pipes0, count.piped.Load()-piped0
	rounds := piped / int64(len(mus))
	t.Logf("%v: %d pipelines carrying %d renewals (%d rounds), %d single commands", 2*timeout, pipes, piped, rounds, cmds)
	if rounds < 2 || pipes > rounds+1 || cmds != 0 {
		t.Fatalf("renewal of %d locks: %d pipelines, %d renewals, %d single commands; want one pipeline a round", len(mus), pipes, piped, cmds)
	}
	raw := srv.Client(t)
	for i, mu := range mus {
		if ctxs[i].Err() != nil {
			t.Fatalf("lock %d lost: %v", i, context.Cause(ctxs[i]))
		}
		if n := raw.Exists(context.Background(), mu.Name()).Val(); n != 1 {
			t.Fatalf("lock %d expired despite the watchdog", i)
		}
		unlockT(t, mu, ctxs[i])
	}
}

// TestFixedLease: with Lease 500ms and no Unlock the lock frees itself,
// and the returned context's deadline is not after the lease's end.
func TestFixedLease(t *testing.T) {
	rc := newClient(t, nil)
	const lease = 500 * time.Millisecond
	mu := reentrant.New(rc, redistest.Key(t), &reentrant.Options{Lease: lease})
	start := time.Now()
	ctx := lockT(t, mu, context.Background())
	// The server ran the acquire before Lock returned, so its lease ends
	// no later than returned + lease, and the deadline must not be later.
	returned := time.Now()
	dl, ok := ctx.Deadline()
	if !ok || dl.After(returned.Add(lease)) || dl.Before(start.Add(lease)) {
		t.Fatalf("deadline %v (set %v), want between %v and %v", dl, ok, start.Add(lease), returned.Add(lease))
	}
	var freed time.Duration
	eventually(t, 3*time.Second, "lock freed by its lease", func() bool {
		locked, err := mu.IsLocked(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		freed = time.Since(start)
		return !locked
	})
	t.Logf("lock freed %v after Lock", freed)
	if freed < lease-50*time.Millisecond {
		t.Fatalf("lock freed after %v, before its %v lease", freed, lease)
	}
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(ctx))
	}
	other, err := reentrant.New(newClient(t, nil), mu.Name(), nil).TryLock(context.Background(), 0)
	if err != nil {
		t.Fatalf("lock not free after its lease: %v", err)
	}
	_ = other
	if err := mu.Unlock(ctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock after the lease ended = %v, want ErrNotHeld", err)
	}
}
