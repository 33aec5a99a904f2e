package rwlock_test

import (
	"context"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own lock names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, runChild, &srv) }

// newClient returns a relock client on srv with its own go-redis client,
// as if it were a separate process; both close when t ends.
func newClient(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), opts)
}

// must returns a function that passes on a lock context, failing the
// test on an error: must(t)(rw.RLock(ctx)).
func must(t testing.TB) func(context.Context, error) context.Context {
	return func(ctx context.Context, err error) context.Context {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return ctx
	}
}
