package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/semaphore"
)

// TestKinds shows a semaphore with a waiter, expirable permits, a latch
// with an awaiter and an election with inspect, and lists each with its
// kind.
func TestKinds(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	rc := newClient(t)
	base := redistest.Key(t)
	semName, permName, latchName, electName := base+":sem", base+":perm", base+":latch", base+":elect"
	t.Cleanup(func() {
		raw.Del(bg, semName, permName, latchName, "relock_election_term:{"+electName+"}", "relock_election_log:{"+electName+"}")
	})

	sem := semaphore.New(rc, semName, nil)
	if _, err := sem.TrySetPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sem.Release(bg, 1) })
	redistest.Background(t, func(ctx context.Context) {
		if sem.Acquire(ctx, 1) == nil {
			sem.Release(bg, 1)
		}
	})
	ps := permits.New(rc, permName, nil)
	if _, err := ps.TrySetPermits(bg, 2); err != nil {
		t.Fatal(err)
	}
	p, err := ps.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release(bg) })
	l := latch.New(rc, latchName, nil)
	if _, err := l.TrySetCount(bg, 2); err != nil {
		t.Fatal(err)
	}
	redistest.Background(t, func(ctx context.Context) { _ = l.Await(ctx) })
	e := election.New(rc, electName, nil)
	lead, err := e.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Resign(lead) })
	eventually(t, "a semaphore waiter and a latch awaiter", func() bool {
		return strings.Contains(ok(t, "inspect", semName), "used as  a semaphore's") && strings.Contains(ok(t, "inspect", latchName), "used as  a latch's")
	})

	out := ok(t, "inspect", semName)
	if w := section(t, out, "waiting for permits (relock's registry, longest first):"); len(w) != 1 || !strings.HasPrefix(w[0], "  "+rc.ID()) {
		t.Fatalf("semaphore waiters %q, want client %s", w, rc.ID())
	}
	out = ok(t, "inspect", permName)
	if !regexp.MustCompile(`\nkind +count\nttl +no expiry\nused as +an expirable semaphore's: permits are held\n`).MatchString(out) ||
		!regexp.MustCompile(`\ncount +1 permits available\n`).MatchString(out) {
		t.Fatalf("permits:\n%s", out)
	}
	if held := section(t, out, "permits held (earliest expiry first):"); len(held) != 1 || !regexp.MustCompile(`^  `+p.ID()+` +[0-9.]+s +20`).MatchString(held[0]) {
		t.Fatalf("permits held %q, want %s with its lease", held, p.ID())
	}
	out = ok(t, "inspect", latchName)
	if !regexp.MustCompile(`\ncount +2 to count down\n`).MatchString(out) {
		t.Fatalf("latch:\n%s", out)
	}
	out = ok(t, "inspect", electName)
	if !regexp.MustCompile(`\nkind +election\n`).MatchString(out) || !regexp.MustCompile(`\n  `+rc.ID()+` +\d+ +relock +1 +"host-a" +[0-9.]+s +20`).MatchString(out) {
		t.Fatalf("election:\n%s", out)
	}
	if h := section(t, out, "history (newest first):"); len(h) != 1 || !strings.HasPrefix(h[0], `  1     "host-a"`) {
		t.Fatalf("history %q, want the one election", h)
	}

	// Whoever waits, a semaphore's, an expirable semaphore's and a
	// latch's kind is a count's, with the use its state shows now; one
	// whose use shows is no idle count.
	out = ok(t, "list", "-skip-idle", base+":*")
	for _, want := range []string{`:elect +election `, `:latch +count \(latch's\) +no expiry +- +0 +0\n`, `:perm +count \(expirable semaphore's\) +no expiry +1 permits +0 +0\n`, `:sem +count \(semaphore's\) +no expiry +- +0 +1\n`} {
		if !regexp.MustCompile(`\n` + regexp.QuoteMeta(base) + want).MatchString(out) {
			t.Fatalf("list lacks %q:\n%s", want, out)
		}
	}
	var records []inspect.Lock
	if err := json.Unmarshal([]byte(ok(t, "list", "-json", "-kind", "count", base+":*")), &records); err != nil {
		t.Fatal(err)
	}
	uses := map[string]inspect.Kind{}
	for _, r := range records {
		if r.Kind != inspect.KindCount {
			t.Fatalf("list -json -kind count listed %s of kind %q", r.Name, r.Kind)
		}
		uses[r.Name] = r.Use
	}
	if len(records) != 3 || uses[semName] != inspect.KindSemaphore || uses[latchName] != inspect.KindLatch || uses[permName] != inspect.KindPermits ||
		len(records[1].Permits) != 1 || records[1].Permits[0].ID != p.ID() {
		t.Fatalf("list -json -kind count = %+v, want the latch, the permits and the semaphore with their uses", records)
	}
}

// TestForceUnlockPermit releases one relock permit by id: it is gone,
// the semaphore's count is back, and its holder's context is cancelled
// within seconds, not at its next renewal (10s away): the holder's client
// listens on its channel once it has held a permit.
func TestForceUnlockPermit(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	rc := newClient(t)
	name := redistest.Key(t)
	t.Cleanup(func() { raw.Del(bg, name) })
	sem := permits.New(rc, name, nil)
	if _, err := sem.TrySetPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	// A client that holds a permit, and nothing else, hears of it.
	p, err := sem.Acquire(bg)
	if err != nil {
		t.Fatal(err)
	}
	redistest.AwaitListening(t, raw, rc)
	fails(t, cli(t, "", "-url", "redis://"+srv.Addr, "force-unlock", "-yes", name), 2, "name the permit to release")
	fails(t, cli(t, "", "-url", "redis://"+srv.Addr, "force-unlock", "-yes", name, strings.Repeat("0", 32)), 1,
		`expirable semaphore "`+name+`" has no permit `+strings.Repeat("0", 32)+" held: nothing changed")
	out := ok(t, "force-unlock", "-yes", name, strings.ToUpper(p.ID()))
	if !strings.HasPrefix(out, "released permit "+p.ID()+" of expirable semaphore "+name+"; told ") {
		t.Fatalf("force-unlock said %q", out)
	}
	select {
	case <-p.Context().Done():
		if !errors.Is(context.Cause(p.Context()), relock.ErrLockLost) {
			t.Fatalf("permit context ended with %v, want ErrLockLost", context.Cause(p.Context()))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the permit's holder was not told within 5s")
	}
	if n, _ := raw.Get(bg, name).Int(); n != 1 {
		t.Fatalf("count %d after the release, want 1", n)
	}
}

// TestForceUnlockElection ends a leadership: the leader's context is
// cancelled at once and the election has no leader.
func TestForceUnlockElection(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	t.Cleanup(func() { raw.Del(bg, "relock_election_term:{"+name+"}", "relock_election_log:{"+name+"}") })
	e := election.New(newClient(t), name, nil)
	lead, err := e.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	out := ok(t, "force-unlock", "-yes", name)
	if !strings.HasPrefix(out, "force-unlocked "+name+" (election)") {
		t.Fatalf("force-unlock said %q", out)
	}
	select {
	case <-lead.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the leader was not told within 5s")
	}
	fails(t, cli(t, "", "-url", "redis://"+srv.Addr, "force-unlock", "-yes", name), 1, "has no leader")
}

// TestDoctor runs doctor on a server of its own: exit 0 when nothing is
// wrong, 4 with a table (or -json) when a hold is not renewed and a fair
// waiter is gone, and with -state an old hold on a later run.
func TestDoctor(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	url := "redis://" + s.Addr
	r := cli(t, "", "-url", url, "doctor")
	if r.code != 0 || r.stdout != "no problems found in 0 records\n" {
		t.Fatalf("doctor of an empty server: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	holder := uuid.NewString() + ":1"
	raw.HSet(bg, "stuck", holder, 1)
	raw.PExpire(bg, "stuck", 8*time.Second)
	raw.RPush(bg, "redisson_lock_queue:{stuck}", uuid.NewString()+":2")

	r = cli(t, "", "-url", url, "doctor")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 4 || len(lines) != 4 || !strings.HasPrefix(lines[0], "PROBLEM ") ||
		!strings.HasPrefix(lines[1], "gone-waiter ") || !strings.HasPrefix(lines[2], "not-renewed  stuck") ||
		lines[3] != "2 problems in 1 record" {
		t.Fatalf("doctor: exit %d, stdout\n%s\nstderr %q", r.code, r.stdout, r.stderr)
	}
	fails(t, r, 4, "doctor found problems")

	state := t.TempDir() + "/seen.json"
	old, _ := json.Marshal(map[string]time.Time{"stuck " + holder: time.Now().Add(-time.Hour)})
	if err := writeFile(state, old); err != nil {
		t.Fatal(err)
	}
	r = cli(t, "", "-url", url, "doctor", "-json", "-state", state, "-lease", "10s")
	var report inspect.Report
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("doctor -json: %v in %q", err, r.stdout)
	}
	var problems []inspect.Problem
	for _, f := range report.Findings {
		problems = append(problems, f.Problem)
	}
	if r.code != 4 || strings.Join(toStrings(problems), ",") != "gone-waiter,old-hold" {
		t.Fatalf("doctor -json -lease 10s with an hour-old sighting: exit %d, problems %v", r.code, problems)
	}
}

func toStrings(ps []inspect.Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return out
}

// TestConnection connects with host:port, with REDIS_URL, and names its
// connection relock-cli.
func TestConnection(t *testing.T) {
	redistest.Parallel(t)
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	raw.HSet(bg, name, uuid.NewString()+":1", 1)
	t.Cleanup(func() { raw.Del(bg, name) })
	if r := cli(t, "", "-url", srv.Addr, "inspect", name); r.code != 0 {
		t.Fatalf("-url host:port: exit %d, %q", r.code, r.stderr)
	}
	if r := cliEnv(t, []string{"REDIS_URL=redis://" + srv.Addr}, "inspect", name); r.code != 0 {
		t.Fatalf("REDIS_URL: exit %d, %q", r.code, r.stderr)
	}
	if r := cliEnv(t, []string{"REDIS_URL=" + srv.Addr}, "-url", "redis://127.0.0.1:1", "inspect", name); r.code != 1 {
		t.Fatalf("-url over REDIS_URL: exit %d, want 1 (the flag's unreachable server)", r.code)
	}
	// The connection's name is seen in CLIENT LIST, which miniredis
	// does not have: the checks above ran on it, this one needs a real
	// server.
	srv.RequireReal(t)
	names := watchNames(t, raw, name)
	if !strings.Contains(names, "name=relock-cli ") {
		t.Fatalf("no connection named relock-cli in CLIENT LIST while watching:\n%s", names)
	}
}

// watchNames runs watch on name and returns CLIENT LIST once the watch
// has connected.
func watchNames(t *testing.T, raw *redis.Client, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := execCommand(ctx, "-url", "redis://"+srv.Addr, "watch", "-for", "10s", name)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()
	var list string
	eventually(t, "the watch connected", func() bool {
		list = raw.ClientList(context.Background()).Val()
		return strings.Contains(list, "name=relock-cli ")
	})
	return list
}
