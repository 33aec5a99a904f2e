package reentrant_test

import (
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own lock names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// newClient returns a relock client on srv with its own go-redis client,
// as if it were a separate process; both close when t ends.
func newClient(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), opts)
}

// channelOf is the release channel of lock name.
func channelOf(name string) string { return "redisson_lock__channel:{" + name + "}" }

// newClientOn returns a relock client on a server of the test's own.
func newClientOn(t testing.TB, s *redistest.Server) *relock.Client {
	t.Helper()
	return redistest.Relock(t, s.LockClient(t), nil)
}
