package redlock_test

import (
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// shared are five independent redis-servers for the tests that do not
// kill or pause any; each test uses its own lock names.
var shared [5]*redistest.Server

func TestMain(m *testing.M) {
	redistest.Main(m, nil, &shared[0], &shared[1], &shared[2], &shared[3], &shared[4])
}

// clientsOn returns one relock client per server, as one "process" would
// have; all close when t ends.
func clientsOn(t testing.TB, servers []*redistest.Server, opts *relock.Options) []*relock.Client {
	t.Helper()
	rcs := make([]*relock.Client, len(servers))
	for i, s := range servers {
		rcs[i] = redistest.Relock(t, s.LockClient(t), opts)
	}
	return rcs
}

// startServers starts n servers of the test's own, for fault tests.
func startServers(t *testing.T, n int) []*redistest.Server {
	t.Helper()
	servers := make([]*redistest.Server, n)
	for i := range servers {
		servers[i] = redistest.Start(t)
		servers[i].RequireReal(t)
	}
	return servers
}

// records counts the servers holding a record of lock name.
func records(t *testing.T, servers []*redistest.Server, name string) int {
	t.Helper()
	n := 0
	for _, s := range servers {
		// One dial and no retries: a killed master holds nothing, and
		// asking it must not wait out go-redis's dial retries.
		o := s.Options()
		o.MaxRetries, o.DialerRetries = -1, 1
		c := redis.NewClient(o)
		if c.Exists(t.Context(), name).Val() == 1 {
			n++
		}
		c.Close()
	}
	return n
}
