package redlock_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
)

// shared are five independent redis-servers for the tests that do not
// kill or pause any; each test uses its own lock names.
var shared [5]*redistest.Server

func TestMain(m *testing.M) {
	for i := range shared {
		s, err := redistest.Launch()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		shared[i] = s
	}
	code := m.Run()
	for _, s := range shared {
		s.Stop()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// clientsOn returns one relock client per server, as one "process" would
// have; all close when t ends.
func clientsOn(t testing.TB, servers []*redistest.Server, opts *relock.Options) []*relock.Client {
	t.Helper()
	rcs := make([]*relock.Client, len(servers))
	for i, s := range servers {
		rc, err := relock.New(s.Client(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rc.Close() })
		rcs[i] = rc
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
		if s.Client(t).Exists(t.Context(), name).Val() == 1 {
			n++
		}
	}
	return n
}
