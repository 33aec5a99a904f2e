package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fence"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/semaphore"
)

// TestStableKinds lists each record with the same kind whatever its
// state: a semaphore nobody waits on and one with a waiter (a count,
// with its use beside the kind while a waiter shows it), a lock free
// of waiters and with a fair queue, a fence guard's token under its
// resource (not as a count named after relock's key), an election's own
// lock named as the election's; and one word for a missing TTL.
func TestStableKinds(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	url := "redis://" + s.Addr
	rc := redistest.Relock(t, s.LockClient(t), nil)
	list := func() string {
		t.Helper()
		r := cli(t, "", "-url", url, "list")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("list: exit %d, %q", r.code, r.stderr)
		}
		return r.stdout
	}
	row := func(out, name, rest string) {
		t.Helper()
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` +` + rest + `$`).MatchString(out) {
			t.Fatalf("no row %s %s in:\n%s", name, rest, out)
		}
	}

	sem := semaphore.New(rc, "exports", nil)
	if _, err := sem.TrySetPermits(bg, 0); err != nil {
		t.Fatal(err)
	}
	if err := fence.NewRedis(raw).Set(bg, "invoices:7", 3, "{invoices:7}:total", "x", 0); err != nil {
		t.Fatal(err)
	}
	e := election.New(rc, "nightly", nil)
	lead, err := e.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Resign(lead); err != nil {
		t.Fatal(err)
	}
	lead, err = e.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Resign(lead) })
	out := list()
	row(out, "exports", `count +no expiry +- +0 +0`)
	row(out, "invoices:7", `fence +no expiry +- +0 +0`)
	row(out, "nightly", `election +[0-9.]+s +relock \w+:\d+ term 2 +0 +0`)
	row(out, "relock_election:{nightly}", `lock \(election nightly's\) +[0-9.]+s +relock \w+:\d+ x1 +0 +0`)
	if strings.Contains(out, "relock_fence") || strings.Contains(out, " none ") {
		t.Fatalf("list shows relock's fence key by itself, or a TTL of none:\n%s", out)
	}

	redistest.Background(t, func(ctx context.Context) {
		if sem.Acquire(ctx, 1) == nil {
			sem.Release(bg, 1)
		}
	})
	eventually(t, "a semaphore waiter", func() bool {
		return strings.Contains(ok(t, "-url", url, "inspect", "exports"), "used as  a semaphore's")
	})
	row(list(), "exports", `count \(semaphore's\) +no expiry +- +0 +1`) // the use its state shows now

	if err := e.Resign(lead); err != nil {
		t.Fatal(err)
	}
	// An election without a leader has no key to expire.
	row(list(), "nightly", `election +- +- +0 +0`)

	// A fenced lock's fencing counter, and a fence token of the same
	// name, each have a row; the inspect view shows both tokens.
	mu := reentrant.New(rc, "invoices:7", &reentrant.Options{Fencing: true})
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(lctx) })
	out = list()
	row(out, "invoices:7", `fence +no expiry +- +0 +0`)
	row(out, "invoices:7", `fencing +no expiry +- +0 +0`)
	row(out, "invoices:7", `lock +[0-9.]+s +relock \w+:\d+ x1 +0 +0`)
	view := ok(t, "-url", url, "inspect", "invoices:7")
	if !regexp.MustCompile(`\nfencing token +1\nfence token +3 \(`).MatchString(view) {
		t.Fatalf("inspect invoices:7 lacks its fencing and fence tokens:\n%s", view)
	}
}

// TestDoctorCountsAsList checks that doctor's "in N records" counts the
// records list shows.
func TestDoctorCountsAsList(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	url := "redis://" + s.Addr
	rc := redistest.Relock(t, s.LockClient(t), nil)
	mu := reentrant.New(rc, "orders:1", &reentrant.Options{Fencing: true})
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(lctx) })
	raw.Set(bg, "hits", 12, 0)
	if err := fence.NewRedis(raw).Set(bg, "invoices:7", 1, "{invoices:7}:total", "x", 0); err != nil {
		t.Fatal(err)
	}
	e := election.New(rc, "nightly", nil)
	lead, err := e.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Resign(lead) })

	rows := strings.Count(ok(t, "-url", url, "list"), "\n") - 1
	r := cli(t, "", "-url", url, "doctor")
	// The fencing counter, the fence token and the election's term stay
	// for good: doctor counts them as information.
	want := "no problems found in 6 records\n" +
		"1 fencing counter, 1 fence token, 1 election term kept for good (~90 B each; see docs/state.md)\n"
	if rows != 6 || r.code != 0 || r.stdout != want {
		t.Fatalf("list showed %d records; doctor: exit %d, %q %q; want 6 in both", rows, r.code, r.stdout, r.stderr)
	}
}

// TestGroup shows a group lock's holders with the hashes of their
// values, names them when the values are given, and force-unlocks the
// values named: the holder is told at once and a waiter gets them.
func TestGroup(t *testing.T) {
	bg := context.Background()
	group := redistest.Key(t)
	values := []string{"Jack_001", "Mary_002"}
	holder, waiter := newClient(t), newClient(t)
	mu := grouplock.New(holder, group, values, nil)
	hctx, err := mu.Lock(relock.WithNewOwner(bg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(hctx) })
	url := "redis://" + srv.Addr

	out := ok(t, "inspect", group)
	held := section(t, out, "held by:")
	fields := []string{grouplock.Kryo5Codec.Field("Jack_001"), grouplock.Kryo5Codec.Field("Mary_002")}
	if len(held) != 1 || !strings.HasPrefix(held[0], "  "+holder.ID()) || !strings.Contains(held[0], "["+fields[0]+"]") ||
		!strings.Contains(held[0], "["+fields[1]+"]") || !strings.Contains(out, "name them with relock inspect "+group+" VALUE...") {
		t.Fatalf("inspect %s: want the holder with both values' hashes and how to name them:\n%s", group, out)
	}
	out = ok(t, "inspect", group, "Mary_002", "Jack_001", "Zoe_003")
	if held := section(t, out, "held by:"); len(held) != 1 || !regexp.MustCompile(` 1 +(Jack_001,Mary_002|Mary_002,Jack_001)$`).MatchString(held[0]) {
		t.Fatalf("inspect %s with its values: holders %q, want them named", group, held)
	}
	if !strings.HasSuffix(out, "\nnot held (under Kryo5Codec): Zoe_003\n") || strings.Contains(out, "name them") {
		t.Fatalf("inspect %s with its values: want Zoe_003 not held, and no hint:\n%s", group, out)
	}
	var l inspect.Lock
	if err := json.Unmarshal([]byte(ok(t, "-json", "inspect", group, "Jack_001")), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != inspect.KindGroup || len(l.Holders) != 1 || !slices.Contains(l.Holders[0].ValueNames, "Jack_001") || !slices.Contains(l.Holders[0].ValueNames, "") {
		t.Fatalf("inspect -json %s Jack_001 = %+v, want Jack_001 named", group, l)
	}
	if !strings.Contains(ok(t, "list", group), group+"  group ") {
		t.Fatalf("list does not show %s as a group", group)
	}

	fails(t, cli(t, "", "-url", url, "force-unlock", "-yes", group), 2, "name the values to free, relock force-unlock "+group+" VALUE...")
	fails(t, cli(t, "", "-url", url, "force-unlock", "-yes", group, "Zoe_003"), 1, "holds none of Zoe_003")
	fails(t, cli(t, "", "-url", url, "force-unlock", "-yes", "-codec", "string", group, "Jack_001"), 1, "hashed as StringCodec")
	fails(t, cli(t, "", "-url", url, "force-unlock", "-yes", group, "Jack_001", "Jack_001"), 2, "VALUEs must be distinct")

	wmu := grouplock.New(waiter, group, values, nil)
	acquired := make(chan error, 1)
	redistest.Background(t, func(ctx context.Context) {
		wctx, err := wmu.Lock(relock.WithNewOwner(ctx))
		if err == nil {
			err = wmu.Unlock(wctx)
		}
		acquired <- err
	})
	out = ok(t, "force-unlock", "-yes", group, "Jack_001", "Mary_002")
	if want := "force-unlocked Jack_001, Mary_002 of group lock \"" + group + "\"; they were held by relock client " + holder.ID(); !strings.HasPrefix(out, want) {
		t.Fatalf("force-unlock said %q, want %q...", out, want)
	}
	select {
	case <-hctx.Done():
		if !errors.Is(context.Cause(hctx), relock.ErrLockLost) {
			t.Fatalf("holder's cause %v, want ErrLockLost", context.Cause(hctx))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the holder was not told within 5s")
	}
	select {
	case err := <-acquired:
		if err != nil {
			t.Fatalf("the waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not get the values within 5s")
	}
}

// TestMessages checks the wording of refusals: each kind named with its
// article, a PERMIT-ID or VALUEs where they do not go.
func TestMessages(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	url := "redis://" + srv.Addr
	base := redistest.Key(t)
	list, fenced, lock := base+":list", base+":fenced", base+":lock"
	raw.RPush(bg, list, "x")
	t.Cleanup(func() { raw.Del(bg, list, "relock_fence:{"+fenced+"}", "{"+fenced+"}:k") })
	if err := fence.NewRedis(raw).Set(bg, fenced, 1, "{"+fenced+"}:k", "x", 0); err != nil {
		t.Fatal(err)
	}
	mu := reentrant.New(newClient(t), lock, nil)
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(lctx) })
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"force-unlock", "-yes", list}, 1, `"` + list + `" is a Redis list that is not relock's or Redisson's, which has no owner to force out: nothing changed`},
		{[]string{"force-unlock", "-yes", fenced}, 1, `"` + fenced + `" is a fence guard's token, not a lock: nothing is held, nothing changed`},
		{[]string{"force-unlock", "-yes", lock, "0123"}, 2, `"` + lock + `" is a lock, not an expirable semaphore's count or a group lock`},
		{[]string{"inspect", lock, "Jack_001"}, 2, `"` + lock + `" is a lock, not a group lock: VALUEs go only with a group lock`},
	} {
		fails(t, cli(t, "", append([]string{"-url", url}, tc.args...)...), tc.code, tc.want)
	}
}
