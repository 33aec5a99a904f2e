package inspect_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own lock names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, runChild, &srv) }

// newClient returns a relock client on s with its own go-redis client,
// as if it were a separate process; both close when t ends.
func newClient(t testing.TB, s *redistest.Server) *relock.Client {
	t.Helper()
	return redistest.Relock(t, s.LockClient(t), nil)
}

// read inspects name or fails t.
func read(t testing.TB, rdb redis.UniversalClient, name string) *inspect.Lock {
	t.Helper()
	l, err := inspect.Read(context.Background(), rdb, name)
	if err != nil {
		t.Fatalf("Read(%q): %v", name, err)
	}
	if l.Name != name {
		t.Fatalf("Read(%q).Name = %q", name, l.Name)
	}
	return l
}

// eventually polls cond every 10ms until it holds, failing t if it does
// not within 5s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitIn runs lock (a Lock call of some lock type) in a goroutine with a
// fresh owner until it acquires or t ends; it then unlocks with unlock.
// t's cleanup cancels the wait and waits for the goroutine.
func waitIn(t testing.TB, lock func(context.Context) (context.Context, error), unlock func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		lctx, err := lock(relock.WithNewOwner(ctx))
		if err == nil {
			_ = unlock(lctx)
			return
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("waiting Lock: %v", err)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// within fails t unless d lies in [lo, hi].
func within(t testing.TB, what string, d, lo, hi time.Duration) {
	t.Helper()
	if d < lo || d > hi {
		t.Fatalf("%s = %v, want between %v and %v", what, d, lo, hi)
	}
}
