package multilock_test

import (
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// servers are three independent redis-servers shared by the package's
// tests; each test uses its own lock names.
var servers [3]*redistest.Server

func TestMain(m *testing.M) {
	redistest.Main(m, nil, &servers[0], &servers[1], &servers[2])
}

// newClients returns one relock client per server, as one "process"
// would have; all close when t ends.
func newClients(t testing.TB, opts *relock.Options) [3]*relock.Client {
	t.Helper()
	var rcs [3]*relock.Client
	for i, s := range servers {
		rcs[i] = redistest.Relock(t, s.LockClient(t), opts)
	}
	return rcs
}
