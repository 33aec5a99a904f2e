package redistest

import "testing"

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
