package rwlock_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/rwlock"
)

// runChild is a child process's whole life: take a read hold on lock
// name at addr with the given watchdog timeout (ms), print the client ID,
// and hold it until killed.
func runChild(role string, args []string) int {
	if role != "read" || len(args) != 3 {
		fmt.Fprintln(os.Stderr, "bad child role:", role, args)
		return 2
	}
	addr, name := args[0], args[1]
	ms, err := strconv.ParseInt(args[2], 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rc, err := relock.New(redis.NewClient(&redis.Options{Addr: addr}), &relock.Options{WatchdogTimeout: time.Duration(ms) * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, err := rwlock.New(rc, name, nil).RLock(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(rc.ID())
	<-ctx.Done()
	fmt.Fprintln(os.Stderr, "child: read hold lost:", context.Cause(ctx))
	return 1
}

// TestDeadReader: a reader killed with SIGKILL stops blocking writers once
// its own holds' leases end, although another reader keeps renewing its
// holds (Redisson's renewal extends every reader's timeout keys, so a
// dead reader lives on as long as a live one).
func TestDeadReader(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	lease := redistest.Short(time.Second, 500*time.Millisecond)
	opts := &relock.Options{WatchdogTimeout: lease}

	child, childID := redistest.StartChild(t, "read", srv.Addr, name, strconv.FormatInt(lease.Milliseconds(), 10))
	live := rwlock.New(newClient(t, opts), name, nil)
	lctx := must(t)(live.RLock(bg))
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if n := raw.HExists(bg, name, childID+":1").Val(); !n {
		t.Fatalf("dead reader's field gone at once: %v", raw.HGetAll(bg, name).Val())
	}

	writer := rwlock.New(newClient(t, opts), name, nil)
	got := make(chan context.Context, 1)
	go func() {
		ctx, err := writer.Lock(bg)
		if err != nil {
			t.Error(err)
		}
		got <- ctx
	}()
	// The live reader holds, and renews, for three leases: long enough
	// for the dead reader's own timeout key to expire.
	time.Sleep(3 * lease)
	select {
	case <-got:
		t.Fatal("writer got in while a live reader held the lock")
	default:
	}
	if lctx.Err() != nil {
		t.Fatalf("live reader lost its hold: %v", context.Cause(lctx))
	}
	released := time.Now()
	if err := live.RUnlock(lctx); err != nil {
		t.Fatal(err)
	}
	var wctx context.Context
	select {
	case wctx = <-got:
	case <-time.After(3 * lease):
		t.Fatalf("writer not in after the live reader left; lock %v", raw.HGetAll(bg, name).Val())
	}
	took := time.Since(released)
	t.Logf("writer in %v after the last live reader left", took)
	if took > lease/2 {
		t.Fatalf("writer waited %v after the live reader left: the dead reader still counted", took)
	}
	if err := writer.Unlock(wctx); err != nil {
		t.Fatal(err)
	}
}
