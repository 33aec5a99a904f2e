package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// goneField is the owner field of a relock client (a version-8 id) that
// does not exist: nobody listens on its channels.
func goneField(owner string) string {
	u := uuid.New()
	u[6] = u[6]&0x0f | 0x80
	return u.String() + ":" + owner
}

// TestOrphanedQueue: a fair queue left without its lock by waiters that
// are gone is listed as a lock nobody holds, inspected with its keys'
// TTL, reported by doctor (exit 4), and removed by force-unlock, which
// hands nothing to the gone waiters.
func TestOrphanedQueue(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	url := "redis://" + s.Addr
	name := "printer"
	queue, timeouts := "redisson_lock_queue:{printer}", "redisson_lock_timeout:{printer}"
	first, second := goneField("2"), goneField("3")
	raw.RPush(bg, queue, first, second)
	deadline := time.Now().Add(time.Minute)
	raw.ZAdd(bg, timeouts, redis.Z{Score: float64(deadline.UnixMilli()), Member: first},
		redis.Z{Score: float64(deadline.Add(time.Second).UnixMilli()), Member: second})
	raw.PExpire(bg, queue, 62*time.Second)
	raw.PExpire(bg, timeouts, 62*time.Second)

	r := cli(t, "", "-url", url, "list")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.HasPrefix(strings.Join(strings.Fields(lines[1]), " "), "printer lock - ") ||
		strings.Fields(lines[1])[4] != "2" {
		t.Fatalf("list: exit %d, stdout\n%s\nstderr %q, want printer as a lock nobody holds, 2 queued", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", "-url", url, "inspect", name)
	if r.code != 0 || !strings.Contains(r.stdout, "queue ttl") || len(section(t, r.stdout, "fair queue:")) != 2 {
		t.Fatalf("inspect: exit %d, stdout\n%s\nstderr %q, want the queue's TTL and its 2 entries", r.code, r.stdout, r.stderr)
	}
	r = cli(t, "", "-url", url, "doctor")
	if r.code != 4 || !strings.Contains(r.stdout, "orphaned-queue  printer") || !strings.Contains(r.stdout, "expire in ") {
		t.Fatalf("doctor: exit %d, stdout\n%s\nstderr %q, want an orphaned-queue with its bound", r.code, r.stdout, r.stderr)
	}

	out := ok2(t, url, "force-unlock", "-yes", name)
	if out != "removed the fair queue of printer (2 waiters); nobody held the lock\n" {
		t.Fatalf("force-unlock printed %q", out)
	}
	if n := raw.Exists(bg, name, queue, timeouts).Val(); n != 0 {
		t.Fatalf("%d of the lock and its queue keys left after force-unlock, want none (the gone waiters handed nothing)", n)
	}
	r = cli(t, "", "-url", url, "doctor")
	if r.code != 0 {
		t.Fatalf("doctor after force-unlock: exit %d, stdout\n%s", r.code, r.stdout)
	}
}

// TestDoctorGoneHolder: a lock held by a relock client that listens on
// nothing is reported at once, long before its lease runs down, with
// exit 4; a Redisson holder, which has no such channel, is not.
func TestDoctorGoneHolder(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	url := "redis://" + s.Addr
	gone := goneField("1")
	raw.HSet(bg, "orders:1", gone, 1)
	raw.PExpire(bg, "orders:1", 30*time.Second)
	raw.HSet(bg, "orders:2", uuid.NewString()+":1", 1)
	raw.PExpire(bg, "orders:2", 30*time.Second)
	r := cli(t, "", "-url", url, "doctor")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 4 || len(lines) != 3 || !strings.HasPrefix(lines[1], "gone-holder  orders:1  lock  "+gone+" holds orders:1") ||
		!strings.Contains(lines[1], "relock force-unlock orders:1") || lines[2] != "1 problem in 2 records" {
		t.Fatalf("doctor: exit %d, stdout\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
}

// ok2 runs the command against url and fails t unless it succeeds with
// nothing on stderr.
func ok2(t testing.TB, url string, args ...string) string {
	t.Helper()
	r := cli(t, "", append([]string{"-url", url}, args...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("relock %v: exit %d, stderr %q, stdout %q", args, r.code, r.stderr, r.stdout)
	}
	return r.stdout
}
