package inspect_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// runChild is a child process's whole life (redistest.StartChild), in
// the role "hold": take reentrant locks args[1]:0 to args[1]:<args[2]-1>
// on args[0], print the client ID, and hold them until killed.
func runChild(role string, args []string) int {
	if role != "hold" || len(args) != 3 {
		fmt.Fprintln(os.Stderr, "bad child role:", role, args)
		return 2
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	rc, err := relock.New(redis.NewClient(&redis.Options{Addr: args[0]}), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	for i := range n {
		if _, err := reentrant.New(rc, args[1]+":"+strconv.Itoa(i), nil).Lock(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "child: Lock:", err)
			return 1
		}
	}
	fmt.Println(rc.ID())
	select {}
}

// listening waits until the relock client id listens on its channel,
// relock_client:{<id>}.
func listening(t testing.TB, raw *redis.Client, id string) {
	t.Helper()
	channel := "relock_client:{" + id + "}"
	eventually(t, channel+" subscribed", func() bool {
		return raw.PubSubNumSub(context.Background(), channel).Val()[channel] == 1
	})
}

// TestDoctorGoneHolder: a process holding three locks, with live waiters
// in another, is killed with SIGKILL. Doctor reports its holds at once,
// as gone-holder, long before their leases end; not the live holder's,
// nor the live waiters.
func TestDoctorGoneHolder(t *testing.T) {
	srv.RequireReal(t)
	raw := srv.Client(t)
	bg := context.Background()
	prefix := redistest.Key(t)
	child, childID := redistest.StartChild(t, "hold", srv.Addr, prefix, "3")
	listening(t, raw, childID)

	rc := newClient(t, srv)
	for i := range 2 {
		w := reentrant.New(newClient(t, srv), prefix+":"+strconv.Itoa(i), nil)
		waitIn(t, w.Lock, w.Unlock)
	}
	eventually(t, "two registered waiters", func() bool {
		return raw.Exists(bg, "relock_lock_waiters:{"+prefix+":0}", "relock_lock_waiters:{"+prefix+":1}").Val() == 2
	})
	live := reentrant.New(rc, prefix+":live", nil)
	lctx, err := live.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Unlock(lctx) })
	listening(t, raw, rc.ID())
	opts := &inspect.DoctorOptions{Pattern: prefix + ":*"}
	if r := doctor(t, raw, opts); len(r.Findings) != 0 {
		t.Fatalf("Doctor with the holder alive: %+v, want nothing wrong", r.Findings)
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	killed := time.Now()
	channel := "relock_client:{" + childID + "}"
	eventually(t, channel+" unsubscribed after the kill", func() bool {
		return raw.PubSubNumSub(bg, channel).Val()[channel] == 0
	})
	r := doctor(t, raw, opts)
	var gone []string
	for _, f := range r.Findings {
		switch f.Problem {
		case inspect.GoneHolder:
			if len(f.Owners) != 1 || !strings.HasPrefix(f.Owners[0], childID+":") || f.TTL <= 0 {
				t.Errorf("gone-holder %+v, want the child's owner and the hold's TTL", f)
			}
			gone = append(gone, f.Name)
		case inspect.GoneWaiter:
			t.Errorf("gone-waiter %+v: the waiters live", f)
		}
	}
	want := []string{prefix + ":0", prefix + ":1", prefix + ":2"}
	if !slices.Equal(gone, want) {
		t.Fatalf("gone-holder findings on %v %v after the kill, want %v; in full %+v", gone, time.Since(killed), want, r.Findings)
	}
	t.Logf("the dead holder was reported %v after the kill, its leases with %v left", time.Since(killed), r.Findings[0].TTL)
}

// TestOrphanedQueue: a fair queue whose lock hash is gone and whose
// waiters listen on nothing is found as a lock nobody holds, read with
// its keys' TTL, and reported by Doctor; not while a waiter in it
// listens.
func TestOrphanedQueue(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	gone, redisson := relockField(t), uuid.NewString()+":9"
	name := "printer"
	queue, timeouts := "redisson_lock_queue:{printer}", "redisson_lock_timeout:{printer}"
	raw.RPush(bg, queue, gone, redisson)
	deadline := time.Now().Add(time.Minute)
	raw.ZAdd(bg, timeouts, redis.Z{Score: float64(deadline.UnixMilli()), Member: gone},
		redis.Z{Score: float64(deadline.UnixMilli()), Member: redisson})

	l := read(t, raw, name)
	if l.Kind != inspect.KindLock || !l.Fair || len(l.Holders) != 0 || len(l.Queue) != 2 || l.QueueTTL != inspect.NoExpiry || !l.Exists() {
		t.Fatalf("Read of a queue without its lock = %+v, want a lock nobody holds, its 2 entries, no expiry", l)
	}
	var found []string
	if err := inspect.Find(bg, raw, "", func(n string, k inspect.Kind) error {
		found = append(found, n+" "+string(k))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(found, []string{"printer lock"}) {
		t.Fatalf("Find = %v, want the queue as a lock", found)
	}
	raw.PExpire(bg, queue, 30*time.Second)
	raw.PExpire(bg, timeouts, 20*time.Second)
	r := doctor(t, raw, nil)
	orphans := only(r, inspect.OrphanedQueue)
	if len(orphans) != 1 || !slices.Equal(orphans[0].Owners, []string{gone, redisson}) || orphans[0].TTL <= inspect.TTL(20*time.Second) || r.Records != 1 {
		t.Fatalf("Doctor = %+v, want one orphaned queue of both entries with the later TTL, in 1 record", r)
	}

	// A waiter that listens keeps the queue alive.
	sub := raw.Subscribe(bg, "redisson_lock__channel:{printer}:"+redisson)
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	if got := only(doctor(t, raw, nil), inspect.OrphanedQueue); len(got) != 0 {
		t.Fatalf("orphaned-queue %+v while a waiter in it listens", got)
	}
}
