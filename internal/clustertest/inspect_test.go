package clustertest_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/clitest"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// TestInspect reads locks of every kind on the cluster, one on each
// master, lists them all, and runs the relock CLI against the cluster:
// list, inspect -json, watch, and a force-unlock whose waiter, woken
// through sharded pub/sub, gets the lock.
func TestInspect(t *testing.T) {
	c := needCluster(t)
	rdb := c.Client(t) // an operator's client: the default user
	bg := context.Background()
	rc := newClient(t, c.LockClient(t), nil)
	base := redistest.Key(t)
	byMaster := namesOnEachMaster(t, c, rdb, base)
	var names []string
	for _, n := range byMaster {
		names = append(names, n)
	}
	slices.Sort(names)
	hold := func(lock func(context.Context) (context.Context, error), unlock func(context.Context) error) {
		t.Helper()
		ctx, err := lock(bg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unlock(ctx) })
	}
	// names[0]: a fair lock with a waiter of another client queued;
	// names[1]: a read/write lock with a reader; the rest reentrant.
	fl := fair.New(rc, names[0], nil)
	hold(fl.Lock, fl.Unlock)
	waiter := newClient(t, c.LockClient(t), nil)
	acquired := make(chan error, 1)
	wctx, cancel := context.WithTimeout(bg, wait)
	var wg sync.WaitGroup
	wg.Go(func() {
		// The waiter's hold ends when its client closes.
		_, err := fair.New(waiter, names[0], nil).Lock(wctx)
		acquired <- err
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	locktest.WaitQueued(t, rdb, names[0], waiter.ID(), 1)
	rw := rwlock.New(rc, names[1], nil)
	hold(rw.RLock, rw.RUnlock)
	for _, n := range names[2:] {
		mu := reentrant.New(rc, n, nil)
		hold(mu.Lock, mu.Unlock)
	}

	for i, n := range names {
		l, err := inspect.Read(bg, rdb, n)
		if err != nil {
			t.Fatalf("Read(%s): %v", n, err)
		}
		if len(l.Holders) != 1 || l.Holders[0].ClientID != rc.ID() {
			t.Fatalf("Read(%s) = %+v, want held by %s", n, l, rc.ID())
		}
		switch {
		case i == 0 && (!l.Fair || len(l.Queue) != 1 || l.Queue[0].ClientID != waiter.ID()):
			t.Fatalf("Read(%s) = %+v, want the waiter queued", n, l)
		case i == 1 && (l.Kind != inspect.KindRWLock || l.Mode != "read" || len(l.Holders[0].ReadLeases) != 1):
			t.Fatalf("Read(%s) = %+v, want a reader", n, l)
		}
	}
	pattern := base + ":*"
	var listed []string
	if err := inspect.List(bg, rdb, pattern, func(name string) error {
		listed = append(listed, name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(listed)
	if !slices.Equal(listed, names) {
		t.Fatalf("List(%s) = %v, want one lock per master %v", pattern, listed, byMaster)
	}

	t.Run("CLI", func(t *testing.T) {
		bin := clitest.Build(t)
		seeds := strings.Join(c.Addrs(), ",")
		cli := func(args ...string) string {
			t.Helper()
			return runCLI(t, bin, append([]string{"-cluster", seeds}, args...)...)
		}
		lines := strings.Split(strings.TrimSpace(cli("list", pattern)), "\n")
		if len(lines) != len(names)+1 {
			t.Fatalf("list printed %q, want a header and %v", lines, names)
		}
		for i, n := range names {
			if !strings.HasPrefix(lines[i+1], n+" ") {
				t.Fatalf("list line %q, want %s", lines[i+1], n)
			}
		}
		var l inspect.Lock
		if err := json.Unmarshal([]byte(cli("-json", "inspect", names[1])), &l); err != nil || l.Kind != inspect.KindRWLock {
			t.Fatalf("inspect -json %s: %+v, %v", names[1], l, err)
		}
		if out := cli("watch", "-for", "500ms", names[2]); !strings.HasPrefix(out, "--- "+names[2]+" at ") {
			t.Fatalf("watch printed %q", out)
		}

		cli("force-unlock", "-yes", names[0])
		gotWithin(t, acquired, time.Now())
	})
}

// TestInspectSentinel runs the relock CLI through Sentinel: it finds the
// master, shows a lock with inspect and list (-json too), and
// force-unlocks it, waking a waiter.
func TestInspectSentinel(t *testing.T) {
	s := redistest.StartSentinel(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := newClient(t, s.Client(t), nil)
	mu := reentrant.New(holder, name, nil)
	ctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(ctx) })
	waiter := newClient(t, s.Client(t), nil)
	acquired := make(chan error, 1)
	wctx, cancel := context.WithTimeout(bg, wait)
	var wg sync.WaitGroup
	wg.Go(func() {
		_, err := reentrant.New(waiter, name, nil).Lock(wctx)
		acquired <- err
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	rdb := s.Client(t)
	redistest.Eventually(t, wait, "the waiter registered", func() bool {
		return rdb.ZCard(bg, "relock_lock_waiters:{"+name+"}").Val() == 1
	})

	bin := clitest.Build(t)
	conn := []string{"-sentinel", strings.Join(s.SentinelAddrs(), ","), "-master", redistest.MasterName}
	out := runCLI(t, bin, append(conn, "inspect", name)...)
	if !strings.Contains(out, holder.ID()) || !strings.Contains(out, waiter.ID()) {
		t.Fatalf("inspect printed\n%s\nwant holder %s and waiter %s", out, holder.ID(), waiter.ID())
	}
	if out := runCLI(t, bin, append(conn, "list", name)...); !regexp.MustCompile(`\n` + regexp.QuoteMeta(name) + ` +lock +\S+ +relock ` + holder.ID()[:8] + `:\d+ x1 +0 +1\n$`).MatchString(out) {
		t.Fatalf("list printed\n%s\nwant %s held by %s with one waiter", out, name, holder.ID())
	}
	var listed []inspect.Lock
	if err := json.Unmarshal([]byte(runCLI(t, bin, append(conn, "list", "-json", name)...)), &listed); err != nil ||
		len(listed) != 1 || len(listed[0].Holders) != 1 || listed[0].Holders[0].ClientID != holder.ID() ||
		len(listed[0].Waiters) != 1 || listed[0].Waiters[0].ClientID != waiter.ID() {
		t.Fatalf("list -json %s = %+v, %v", name, listed, err)
	}
	runCLI(t, bin, append(conn, "force-unlock", "-yes", name)...)
	gotWithin(t, acquired, time.Now())
}

// runCLI runs the command with args and returns its output, failing t
// unless it succeeds with nothing on stderr.
func runCLI(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, errs, code := clitest.Run(t, bin, args...)
	if code != 0 || errs != "" {
		t.Fatalf("relock %v: exit %d, stderr %q", args, code, errs)
	}
	return out
}

// gotWithin checks that a waiter's Lock, reporting on acquired, got the
// lock within a second of a force-unlock that ended at done.
func gotWithin(t *testing.T, acquired <-chan error, done time.Time) {
	t.Helper()
	select {
	case err := <-acquired:
		if err != nil {
			t.Fatalf("the waiter's Lock: %v", err)
		}
		if d := time.Since(done); d > time.Second {
			t.Fatalf("the waiter got the lock %v after force-unlock, want within 1s", d)
		}
	case <-time.After(time.Second):
		t.Fatal("the waiter did not get the lock within 1s of force-unlock")
	}
}
