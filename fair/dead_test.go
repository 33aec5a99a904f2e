package fair_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// runChild is a child process's whole life: print the client ID, then
// wait in the queue for lock name on addr until killed (or, as "hold",
// hold it: holdChild).
func runChild(role string, args []string) int {
	if role == "hold" {
		return holdChild(args)
	}
	if role != "queue" || len(args) != 3 {
		fmt.Fprintln(os.Stderr, "bad child role:", role, args)
		return 2
	}
	addr, name := args[0], args[1]
	waitMs, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rc, err := relock.New(redis.NewClient(&redis.Options{Addr: addr}), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(rc.ID())
	_, err = fair.New(rc, name, &fair.Options{WaitTimeout: time.Duration(waitMs) * time.Millisecond}).Lock(context.Background())
	fmt.Fprintln(os.Stderr, "child: Lock returned:", err)
	return 1
}

// TestDeadWaiterDropped: a relock waiter killed with SIGKILL while at the
// head of the queue is passed over by the release at once: the grant's
// PUBLISH reaches nobody on the dead client's channel, so the release
// drops it and hands the lock to the live waiter behind it, which has
// waited past its first deadline by then and kept its place by retrying.
func TestDeadWaiterDropped(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, timeouts := queueKeys(name)
	wait := redistest.Short(time.Second, 500*time.Millisecond)
	opts := &fair.Options{WaitTimeout: wait}

	// A short watchdog lease keeps the waiters' first deadlines (the
	// lock's TTL plus a wait timeout a place) short too, so that they
	// pass while the waiters wait. Twice the wait timeout: a loaded
	// machine that stalls the renewals for two thirds of a 1s lease
	// loses it, and the child takes the lock.
	hold := 2 * wait
	holder := fair.New(newClient(t, &relock.Options{WatchdogTimeout: hold}), name, opts)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	child, childID := redistest.StartChild(t, "queue", srv.Addr, name, strconv.FormatInt(wait.Milliseconds(), 10))
	childField := locktest.WaitQueued(t, raw, name, childID, 1)
	release := make(chan struct{})
	defer close(release)
	liveField, liveDone := queued(t, raw, name, 2, opts, bg, release)
	first := map[string]float64{}
	for _, f := range []string{childField, liveField} {
		first[f] = raw.ZScore(bg, timeouts, f).Val()
	}

	// Hold for three wait timeouts, and until both first deadlines have
	// passed on the server: both waiters are live and keep their places
	// by retrying, which moves their deadlines on.
	time.Sleep(3 * wait)
	redistest.Eventually(t, 3*wait, "the waiters' first deadlines passed", func() bool {
		now := raw.Time(bg).Val()
		return float64(now.UnixMilli()) > max(first[childField], first[liveField])
	})
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 2 || q[0] != childField || q[1] != liveField {
		t.Fatalf("queue after the first deadlines: %v, want the child %s then %s", q, childField, liveField)
	}
	for _, f := range []string{childField, liveField} {
		if d := raw.ZScore(bg, timeouts, f).Val(); d <= first[f] {
			t.Fatalf("deadline of %s %v after its first one %v passed, want it moved on by a retry", f, d, first[f])
		}
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	// The release finds nobody listening for the dead head's grant. The
	// server drops a killed client's subscription when it reads the
	// closed connection: wait until it has.
	childChannel := "redisson_lock__channel:{" + name + "}:" + childID
	redistest.Eventually(t, 5*time.Second, childChannel+" unsubscribed after the kill", func() bool {
		return raw.PubSubNumSub(bg, childChannel).Val()[childChannel] == 0
	})
	unlocked := time.Now()
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	// The release itself granted the live waiter: its field is in the
	// lock, the dead head out of the queue. (Left to the live waiter's
	// next retry, the lock would be free and the dead head still queued.)
	if got := raw.HGet(bg, name, liveField).Val(); got != "1" {
		t.Fatalf("lock %v, queue %v right after the release, want %s granted", raw.HGetAll(bg, name).Val(), raw.LRange(bg, queue, 0, -1).Val(), liveField)
	}
	select {
	case err := <-liveDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * hold):
		t.Fatalf("live waiter did not acquire within %v of the release; queue %v", 2*hold, raw.LRange(bg, queue, 0, -1).Val())
	}
	took := time.Since(unlocked)
	t.Logf("live waiter acquired %v after the release started (wait timeout %v)", took, wait)
	// A grant to the dead head would have held the lock for its lease.
	if took >= hold {
		t.Fatalf("live waiter acquired %v after the release: the dead head was not passed over at the release", took)
	}
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 0 {
		t.Fatalf("queue %v after the live waiter acquired", q)
	}
}
