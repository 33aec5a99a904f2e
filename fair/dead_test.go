package fair_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// runChild is a child process's whole life: print the client ID, then
// wait in the queue for lock name on addr until killed.
func runChild(role string, args []string) int {
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
// waited several wait timeouts by then and kept its place.
func TestDeadWaiterDropped(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	queue, _ := queueKeys(name)
	wait := redistest.Short(time.Second, 500*time.Millisecond)
	opts := &fair.Options{WaitTimeout: wait}

	// A short watchdog lease keeps the waiters' initial deadlines (the
	// lock's TTL plus the wait timeout) short too.
	holder := fair.New(newClient(t, &relock.Options{WatchdogTimeout: wait}), name, opts)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	child, childID := redistest.StartChild(t, "queue", srv.Addr, name, strconv.FormatInt(wait.Milliseconds(), 10))
	locktest.WaitQueued(t, raw, name, childID, 1)
	release := make(chan struct{})
	defer close(release)
	liveField, liveDone := queued(t, raw, name, 2, opts, bg, release)

	// Hold for three wait timeouts: both waiters are live and keep their
	// places by retrying.
	time.Sleep(3 * wait)
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 2 || !strings.HasPrefix(q[0], childID+":") || q[1] != liveField {
		t.Fatalf("queue after 3 wait timeouts: %v, want the child then %s", q, liveField)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	// The release finds nobody listening for the dead head's grant. The
	// server drops a killed client's subscription when it reads the
	// closed connection: wait until it has.
	childChannel := "redisson_lock__channel:{" + name + "}:" + childID
	deadline := time.Now().Add(5 * time.Second)
	for raw.PubSubNumSub(bg, childChannel).Val()[childChannel] != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s still subscribed 5s after the kill", childChannel)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-liveDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * wait):
		t.Fatalf("live waiter did not acquire within %v of the head's death; queue %v", 3*wait, raw.LRange(bg, queue, 0, -1).Val())
	}
	took := time.Since(killed)
	t.Logf("live waiter acquired %v after the head was killed (wait timeout %v)", took, wait)
	if took > wait/2 {
		t.Fatalf("live waiter acquired %v after the kill: the dead head was not passed over at the release", took)
	}
	if q := raw.LRange(bg, queue, 0, -1).Val(); len(q) != 0 {
		t.Fatalf("queue %v after the live waiter acquired", q)
	}
}
