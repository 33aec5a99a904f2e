package relocktest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/relocktest"
)

// TestMain starts a redis-server when one is installed (under
// RELOCK_REQUIRE_REDIS=1 it must be) and hands its address to the Kits
// as a user would, through REDIS_ADDR, so that every test runs on both
// servers (see servers). A REDIS_ADDR from the environment is replaced:
// the tests touch no server they did not start.
func TestMain(m *testing.M) {
	redistest.RaiseParallel()
	srv, err := redistest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if srv.Real() {
		os.Setenv(relocktest.AddrEnv, srv.Addr)
	} else {
		os.Unsetenv(relocktest.AddrEnv)
	}
	code := m.Run()
	srv.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// patience bounds every wait for something the tests expect: generous,
// so that a busy machine does not fail them, since none of them checks
// how soon it happens.
const patience = 10 * time.Second

// servers runs test in parallel on an embedded server and, when TestMain
// started one, on the redis-server of REDIS_ADDR, beside the package's
// other tests: each waits seconds for a lease or a fallback, and every
// Kit has servers or names of its own.
func servers(t *testing.T, test func(t *testing.T, k *relocktest.Kit)) {
	t.Parallel()
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		test(t, relocktest.New(t, &relocktest.Options{Embedded: true}))
	})
	t.Run("redis-server", func(t *testing.T) {
		// REDIS_ADDR, set by TestMain, is no input go test's cache sees:
		// Record is (redistest.Record).
		redistest.Record()
		switch {
		case testing.Short():
			t.Skip("-short: the embedded server's run covers the control")
		case os.Getenv(relocktest.AddrEnv) == "":
			t.Skip("redis-server is not installed")
		}
		t.Parallel()
		test(t, relocktest.New(t, nil))
	})
}

// embedded runs test on an embedded server only: for Advance.
func embedded(t *testing.T, test func(t *testing.T, k *relocktest.Kit)) {
	t.Parallel()
	test(t, relocktest.New(t, &relocktest.Options{Embedded: true}))
}

// cancelled waits until ctx is cancelled and returns its cause.
func cancelled(t *testing.T, ctx context.Context) error {
	t.Helper()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-time.After(patience):
		t.Fatalf("context not cancelled within %v", patience)
		return nil
	}
}

// registered waits until registry, a ZSET of waiters, has one.
func registered(t *testing.T, k *relocktest.Kit, registry string) {
	t.Helper()
	redistest.Eventually(t, patience, "a waiter in "+registry, func() bool {
		n, err := k.Redis().ZCard(context.Background(), registry).Result()
		return err == nil && n > 0
	})
}

// result runs f in a goroutine and returns where its error will come.
func result(f func() error) <-chan error {
	c := make(chan error, 1)
	go func() { c <- f() }()
	return c
}

// await waits for an error from c.
func await(t *testing.T, c <-chan error) error {
	t.Helper()
	select {
	case err := <-c:
		return err
	case <-time.After(patience):
		t.Fatalf("no result within %v", patience)
		return nil
	}
}

// must fails t on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
