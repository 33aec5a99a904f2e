package fair_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// holdChild takes fair lock args[1] on args[0] with a watchdog timeout
// of args[2] ms, prints its client ID once it holds it, and holds it
// until killed.
func holdChild(args []string) int {
	if len(args) != 3 {
		fmt.Fprintln(os.Stderr, "bad hold child:", args)
		return 2
	}
	leaseMs, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rc, err := relock.New(redis.NewClient(&redis.Options{Addr: args[0]}), &relock.Options{WatchdogTimeout: time.Duration(leaseMs) * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	lctx, err := fair.New(rc, args[1], nil).Lock(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: Lock:", err)
		return 1
	}
	fmt.Println(rc.ID())
	<-lctx.Done()
	fmt.Fprintln(os.Stderr, "child: hold ended:", context.Cause(lctx))
	return 1
}

// TestOrphanedQueueExpires: a fair lock's holder and its two queued
// waiters, each a process of its own, are killed with SIGKILL. Nobody
// acquires again, yet the queue keys go: relock's scripts leave them a
// TTL of a second past the latest deadline in them, by the server's
// clock. Until then Doctor reports the orphaned queue with that bound.
func TestOrphanedQueueExpires(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	wait, lease := 500*time.Millisecond, time.Second
	const margin = time.Second

	holder, _ := redistest.StartChild(t, "hold", srv.Addr, name, strconv.FormatInt(lease.Milliseconds(), 10))
	first, firstID := redistest.StartChild(t, "queue", srv.Addr, name, strconv.FormatInt(wait.Milliseconds(), 10))
	locktest.WaitQueued(t, raw, name, firstID, 1)
	second, secondID := redistest.StartChild(t, "queue", srv.Addr, name, strconv.FormatInt(wait.Milliseconds(), 10))
	locktest.WaitQueued(t, raw, name, secondID, 2)
	for _, c := range []*exec.Cmd{holder, first, second} {
		if err := c.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = c.Wait()
	}

	// The bound: the latest deadline in the timeout set, plus the margin.
	last := raw.ZRangeWithScores(bg, timeouts, -1, -1).Val()
	if len(last) != 1 {
		t.Fatalf("timeout set %v after the kill, want the waiters' deadlines", raw.ZRangeWithScores(bg, timeouts, 0, -1).Val())
	}
	bound := time.UnixMilli(int64(last[0].Score)).Add(margin)
	now := raw.Time(bg).Val()
	for _, k := range []string{queue, timeouts} {
		ttl := raw.PTTL(bg, k).Val()
		if ttl <= 0 || now.Add(ttl).After(bound.Add(10*time.Millisecond)) {
			t.Fatalf("%s has PTTL %v at %v, want one that ends by %v (a second past the latest deadline)", k, ttl, now, bound)
		}
	}

	// Once the lease of the dead holder ends, what is left is an orphaned
	// queue; Doctor reports it, with its TTL.
	redistest.Eventually(t, 2*lease+time.Second, "the dead holder's lease ended", func() bool {
		return raw.Exists(bg, name).Val() == 0
	})
	if raw.Exists(bg, queue, timeouts).Val() == 2 {
		r, err := inspect.Doctor(bg, raw, &inspect.DoctorOptions{Pattern: name})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range r.Findings {
			if f.Problem == inspect.OrphanedQueue && f.Name == name {
				found = len(f.Owners) == 2 && f.TTL > 0
			}
		}
		if !found {
			t.Errorf("Doctor after the kill: %+v, want an orphaned-queue of 2 entries with its TTL", r.Findings)
		}
	}

	// And the keys are gone at the bound, though nobody acquired again.
	redistest.Eventually(t, time.Until(bound)+2*time.Second, "the queue keys expired", func() bool {
		return raw.Exists(bg, queue, timeouts).Val() == 0
	})
	if end := raw.Time(bg).Val(); end.Before(bound.Add(-margin)) {
		t.Fatalf("queue keys gone at %v, before the latest deadline %v: a waiter could have lost its place", end, bound.Add(-margin))
	}
}

// TestQueueTTLWithRedisson: Redisson's fair acquire keeps the TTL
// relock's scripts leave on the queue keys (its RPUSH and ZADD do not
// clear it), and relock's next write of the queue covers the Redisson
// waiter's deadline: the keys live until a second past it, and the
// Redisson waiter is handed its turn as before.
func TestQueueTTLWithRedisson(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	holder := fair.New(newClient(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(bg)
	waiter := fair.New(newClient(t, nil), name, nil)
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Lock(wctx)
		done <- err
	}()
	waitQueued(t, raw, queue, 1)
	if ttl := raw.PTTL(bg, queue).Val(); ttl <= 0 {
		t.Fatalf("queue PTTL %v after relock's waiter joined, want a TTL", ttl)
	}
	redisson := newRedissonWaiter(t, raw, name)
	if redisson.acquire(t) {
		t.Fatal("Redisson's acquire took a held lock")
	}
	waitQueued(t, raw, queue, 2)
	for _, k := range []string{queue, timeouts} {
		if ttl := raw.PTTL(bg, k).Val(); ttl <= 0 {
			t.Fatalf("%s PTTL %v after Redisson's waiter joined, want relock's TTL kept", k, ttl)
		}
	}
	// The relock waiter gives up: its script moves the Redisson waiter
	// up and bounds the keys by its deadline.
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the relock waiter took the lock")
	}
	waitQueued(t, raw, queue, 1)
	due := raw.ZScore(bg, timeouts, redisson.field).Val()
	now := raw.Time(bg).Val()
	for _, k := range []string{queue, timeouts} {
		ttl := raw.PTTL(bg, k).Val()
		want := time.UnixMilli(int64(due)).Add(time.Second).Sub(now)
		if ttl <= 0 || ttl > want+10*time.Millisecond || ttl < want-time.Second {
			t.Fatalf("%s PTTL %v once only Redisson's waiter is left, want about %v (a second past its deadline)", k, ttl, want)
		}
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	redisson.woken(t)
	if !redisson.acquire(t) {
		t.Fatal("Redisson's waiter, woken, did not take the lock")
	}
	if n := raw.Exists(bg, queue, timeouts).Val(); n != 0 {
		t.Fatalf("%d queue keys left once Redisson's waiter took the lock", n)
	}
	redisson.unlock(t)
}

// TestForceUnlockOrphanedQueue: ForceUnlock of a free lock whose queue
// keys are left hands it on as a release would: a gone relock waiter
// at the head is dropped, and the first one that listens is granted the
// lock on its client's channel. A queue of gone waiters alone is
// removed, and nobody is granted anything.
func TestForceUnlockOrphanedQueue(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	const gone = "00000000-0000-8000-8000-00000000dead:1"
	const live = "00000000-0000-8000-8000-0000000a11fe:2"
	sub := raw.Subscribe(bg, "redisson_lock__channel:{"+name+"}:"+live[:36])
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	due := float64(time.Now().Add(time.Minute).UnixMilli())
	raw.RPush(bg, queue, gone, live)
	raw.ZAdd(bg, timeouts, redis.Z{Score: due, Member: gone}, redis.Z{Score: due, Member: live})
	m := fair.New(newClient(t, nil), name, nil)
	if deleted, err := m.ForceUnlock(bg); err != nil || deleted {
		t.Fatalf("ForceUnlock of a free lock with a queue = %v, %v; want false, nil", deleted, err)
	}
	ctx, cancel := context.WithTimeout(bg, 2*time.Second)
	defer cancel()
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "2:30000" {
		t.Fatalf("the live waiter's channel: %v, %v; want its grant \"2:30000\"", msg, err)
	}
	if got := raw.HGetAll(bg, name).Val(); len(got) != 1 || got[live] != "1" {
		t.Fatalf("lock %v after ForceUnlock, want it granted to the live waiter", got)
	}
	if n := raw.Exists(bg, queue, timeouts).Val(); n != 0 {
		t.Fatalf("%d queue keys left: the gone head not dropped", n)
	}
	raw.Del(bg, name)

	raw.RPush(bg, queue, gone)
	raw.ZAdd(bg, timeouts, redis.Z{Score: due, Member: gone})
	if deleted, err := m.ForceUnlock(bg); err != nil || deleted {
		t.Fatalf("ForceUnlock of a queue of gone waiters = %v, %v; want false, nil", deleted, err)
	}
	if n := raw.Exists(bg, name, queue, timeouts).Val(); n != 0 {
		t.Fatalf("%d of the lock and its queue keys after ForceUnlock of gone waiters, want none", n)
	}
}
