package faulttest_test

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
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// runChild is a child process's whole life: take reentrant lock name at
// addr, with the watchdog (WatchdogTimeout ms) when lease is 0 or with a
// fixed lease (ms) otherwise, print its hash field once it holds it, and
// hold it until killed.
func runChild(role string, args []string) int {
	if role != "hold" || len(args) != 4 {
		fmt.Fprintln(os.Stderr, "bad child role:", role, args)
		return 2
	}
	addr, name := args[0], args[1]
	var ms [2]int64
	for i, a := range args[2:] {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		ms[i] = n
	}
	watchdog, lease := time.Duration(ms[0])*time.Millisecond, time.Duration(ms[1])*time.Millisecond
	rc, err := relock.New(redis.NewClient(&redis.Options{Addr: addr}), &relock.Options{WatchdogTimeout: watchdog})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, err := reentrant.New(rc, name, &reentrant.Options{Lease: lease}).Lock(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println(rc.ID())
	// A fixed lease ends on its own; the process lives on, holding
	// nothing, until it is killed. With the watchdog it holds for good.
	<-ctx.Done()
	select {}
}

// TestKilledHolder: a process holding a lock is killed with SIGKILL
// (no unlock, no goodbye); a waiter in this process, already waiting,
// gets the lock within the lease + 1 s of the kill, with the watchdog
// (the last renewal's lease runs out) and with a fixed lease.
//
// Bound: the lock's TTL at the kill is at most the lease, and the
// waiter's retry timer is set to the TTL it last saw, so it retries
// right when the key expires; the 1 s is slack for timers and a loaded
// machine.
func TestKilledHolder(t *testing.T) {
	requireReal(t)
	for _, tc := range []struct {
		name            string
		watchdog, lease time.Duration
	}{
		{"watchdog", time.Second, 0},
		{"fixed lease", 30 * time.Second, 1500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bg := context.Background()
			raw := newRedis(t, srv.Addr)
			name := redistest.Key(t)
			lease := tc.lease
			if lease == 0 {
				lease = tc.watchdog
			}
			child, childID := redistest.StartChild(t, "hold", srv.Addr, name,
				strconv.FormatInt(tc.watchdog.Milliseconds(), 10), strconv.FormatInt(tc.lease.Milliseconds(), 10))
			fields := raw.HGetAll(bg, name).Val()
			if len(fields) != 1 {
				t.Fatalf("lock %s after the child took it: %v", name, fields)
			}
			for f := range fields {
				if !strings.HasPrefix(f, childID+":") {
					t.Fatalf("lock %s held by %s, not by the child %s", name, f, childID)
				}
			}

			waiter := reentrant.New(newClient(t, srv.Addr, nil), name, nil)
			got := make(chan error, 1)
			var acquired time.Time
			go func() {
				ctx, err := waiter.Lock(bg)
				acquired = time.Now()
				if err == nil {
					err = waiter.Unlock(ctx)
				}
				got <- err
			}()
			waitSubscribed(t, raw, name, 1)
			// Let the watchdog renew a few times first, so that the
			// waiter has seen the TTL move.
			time.Sleep(lease / 2)

			ttl := raw.PTTL(bg, name).Val()
			if err := child.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			_ = child.Wait()
			limit := lease + time.Second
			select {
			case err := <-got:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(limit + 5*time.Second):
				t.Fatalf("waiter did not get the lock within %v of the kill; lock %v", limit+5*time.Second, raw.HGetAll(bg, name).Val())
			}
			took := acquired.Sub(killed)
			t.Logf("killed holder (TTL %v at the kill, lease %v): waiter got the lock %v after the kill", ttl, lease, took.Round(time.Millisecond))
			if took > limit {
				t.Fatalf("waiter got the lock %v after the kill, past lease + 1s = %v", took, limit)
			}
		})
	}
}
