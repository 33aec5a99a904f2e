package main_test

import (
	"context"
	"strings"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestDoctorEviction: doctor reports a master with a maxmemory and
// volatile-lru as a problem, the fix in its line, and exits 4; a user
// that may not run INFO is told that eviction could not be checked, and
// finds no problem.
func TestDoctorEviction(t *testing.T) {
	s := redistest.Start(t, "--maxmemory", "100mb", "--maxmemory-policy", "volatile-lru")
	s.RequireReal(t)
	url := "redis://" + s.Addr
	r := cli(t, "", "-url", url, "doctor")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 4 || len(lines) != 3 || !strings.HasPrefix(lines[1], "may-evict  "+s.Addr+"  server  ") ||
		!strings.Contains(lines[1], "volatile-lru") || !strings.Contains(lines[1], "set maxmemory-policy noeviction") ||
		lines[2] != "1 problem in 0 records" {
		t.Fatalf("doctor: exit %d, stdout\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}

	raw := s.Client(t)
	bg := context.Background()
	if err := raw.Do(bg, "ACL", "SETUSER", "noinfo", "on", ">noinfo-password", "~*", "&*", "+@all", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	// The server's cleanup fails the test on denied commands: these are
	// the test's own.
	t.Cleanup(func() { _ = raw.Do(context.Background(), "ACL", "LOG", "RESET").Err() })
	r = cli(t, "", "-url", "redis://noinfo:noinfo-password@"+s.Addr, "doctor")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "no problems found in 0 records\ncould not check eviction on "+s.Addr+": NOPERM") {
		t.Fatalf("doctor as a user without INFO: exit %d, stdout\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
}
