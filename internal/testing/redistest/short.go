package redistest

import (
	"flag"
	"strconv"
	"testing"
)

// SkipShort skips tb under go test -short, saying what is skipped and
// why: -short keeps go test ./... under a minute on 2 cores, so it
// leaves out the slow suites (cluster, Sentinel, TLS, the deadline
// matrix) and long individual tests. CI runs everything, without -short.
func SkipShort(tb testing.TB, why string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: skipped, " + why + "; run without -short for it")
	}
}

// Short returns full, or under go test -short the shorter value short: for
// the sleeps and leases of time-based tests, whose -short runs then check
// the same behaviour over fewer rounds.
func Short[T any](full, short T) T {
	if testing.Short() {
		return short
	}
	return full
}

// shortParallel is how many tests marked Parallel run at once under
// -short: they spend their time waiting out leases and timers, not on
// the CPU, so more of them than cores share the machine well.
const shortParallel = 8

// RaiseParallel is for a TestMain, before m.Run: under -short it lets
// shortParallel tests marked Parallel run at once, unless -parallel was
// given. Without -short nothing changes: the full run keeps go test's
// default of GOMAXPROCS.
func RaiseParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if testing.Short() && !given {
		_ = flag.Set("test.parallel", strconv.Itoa(shortParallel))
	}
}

// Parallel marks t parallel under -short (see RaiseParallel): for a test
// that waits out leases or timers on names and clients of its own, and
// neither pauses, restarts nor counts a server that other tests use.
func Parallel(t *testing.T) {
	if testing.Short() {
		t.Parallel()
	}
}
