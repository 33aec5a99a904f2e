package redistest

import (
	"os"
	"os/exec"
)

// find looks a binary up as every launcher does: on PATH, and, when it
// is missing, reading RequireEnv to tell a failure from a fallback.
// Record repeats the same reads.
func find(name string) (path string, required bool, err error) {
	path, err = exec.LookPath(name)
	return path, os.Getenv(RequireEnv) == "1", err
}

// Record repeats, for go test's cache, the reads by which the launchers
// chose what to start: PATH, where they find redis-server (and
// redis-cli, redis-sentinel), and RELOCK_REQUIRE_REDIS.
//
// go test reuses a package's passing result while the test binary, the
// environment variables its tests read and the files of the module they
// opened are unchanged ("go help test"), and it learns what they read
// from the test log, which records only what happens while m.Run runs:
// the lookup of a TestMain's Launch or Main, before m.Run, is not in it.
// Without Record, a run on miniredis (redis-server not on PATH) would be
// reused, "ok (cached)", once redis-server is on PATH, and the tests
// that need a real server would never run. A Server's Options (every
// client of it), Real and Mini (every check of its kind) call Record, so
// a test that uses the server records the lookup; a package whose tests
// reach the server by its Addr alone, or start servers conditionally
// (a cluster, a Kit's REDIS_ADDR), calls it from a test.
//
// The cache consults files inside the module only: a redis-server
// installed into a directory already on PATH, PATH unchanged, is not
// seen; run go test with -count=1 (or go clean -testcache) once then.
func Record() {
	_, _, _ = find("redis-server")
}
