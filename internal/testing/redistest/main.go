package redistest

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// Main is a package's TestMain: in a child process started by StartChild
// it runs child (which may be nil when the package starts none) and
// exits; otherwise it launches one server per pointer in servers, runs
// the tests, stops the servers, and fails the run if a server denied
// LockUser anything (CheckDenied) or goroutines leaked.
func Main(m *testing.M, child func(role string, args []string) int, servers ...**Server) {
	if role, args, ok := ChildRole(); ok && child != nil {
		os.Exit(child(role, args))
	}
	RaiseParallel()
	for _, dst := range servers {
		s, err := Launch()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		*dst = s
	}
	code := m.Run()
	for _, dst := range servers {
		if err := (*dst).CheckDenied(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
		(*dst).Stop()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
