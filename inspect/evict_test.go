package inspect_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestDoctorEviction: a master with a maxmemory and volatile-lru is a
// may-evict finding naming the policy and the fix; with noeviction it is
// none; a user that may not run INFO leaves the master in Unchecked, and
// no finding.
func TestDoctorEviction(t *testing.T) {
	s := redistest.Start(t, "--maxmemory", "100mb", "--maxmemory-policy", "volatile-lru")
	s.RequireReal(t)
	raw := s.Client(t)
	bg := context.Background()

	found := only(doctor(t, raw, nil), inspect.MayEvict)
	if len(found) != 1 {
		t.Fatalf("may-evict findings %+v, want 1", found)
	}
	f := found[0]
	if f.Name != s.Addr || f.Kind != inspect.KindServer || !strings.Contains(f.Detail, "volatile-lru") || !strings.Contains(f.Detail, "noeviction") || !strings.Contains(f.Detail, "104857600 bytes") {
		t.Errorf("finding %+v", f)
	}

	const user, password = "noinfo", "noinfo-password"
	if err := raw.Do(bg, "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	// The server's cleanup fails the test on denied commands: these are
	// the test's own.
	t.Cleanup(func() { _ = raw.Do(context.Background(), "ACL", "LOG", "RESET").Err() })
	o := s.Options()
	o.Username, o.Password = user, password
	limited := redis.NewClient(o)
	t.Cleanup(func() { limited.Close() })
	r := doctor(t, limited, nil)
	if len(only(r, inspect.MayEvict)) != 0 || len(r.Unchecked) != 1 || !strings.HasPrefix(r.Unchecked[0], s.Addr+": NOPERM") {
		t.Errorf("Doctor as a user without INFO: findings %+v, unchecked %q; want no may-evict, %s unchecked", r.Findings, r.Unchecked, s.Addr)
	}

	if err := raw.ConfigSet(bg, "maxmemory-policy", "noeviction").Err(); err != nil {
		t.Fatal(err)
	}
	if r := doctor(t, raw, nil); len(r.Findings) != 0 || len(r.Unchecked) != 0 {
		t.Errorf("Doctor on noeviction = %+v", r)
	}
}
