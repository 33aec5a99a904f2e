package multilock_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
)

// servers are three independent redis-servers shared by the package's
// tests; each test uses its own lock names.
var servers [3]*redistest.Server

func TestMain(m *testing.M) {
	for i := range servers {
		s, err := redistest.Launch()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		servers[i] = s
	}
	code := m.Run()
	for _, s := range servers {
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

// newClients returns one relock client per server, as one "process"
// would have; all close when t ends.
func newClients(t testing.TB, opts *relock.Options) [3]*relock.Client {
	t.Helper()
	var rcs [3]*relock.Client
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
