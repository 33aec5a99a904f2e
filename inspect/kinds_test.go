package inspect_test

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fence"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestFenceKind finds the last token package fence's Redis guard keeps
// for a resource as KindFence under the resource's name, for a resource
// with a hash tag of its own and one without, and not as a count named
// after the guard's key: inspect's name of that key follows fence's.
func TestFenceKind(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	guard := fence.NewRedis(raw)
	for resource, key := range map[string]string{"invoices:7": "{invoices:7}:total", "items:{8}": "stock:{8}"} {
		if err := guard.Set(bg, resource, 5, key, "x", 0); err != nil {
			t.Fatal(err)
		}
		l := read(t, raw, resource)
		if l.Kind != inspect.KindFence || l.Fence != 5 || !l.Exists() || l.Held() {
			t.Fatalf("Read(%q) = kind %q, fence token %d; want a fence guard's token 5, nothing held", resource, l.Kind, l.Fence)
		}
	}
	// A lock of the same name keeps its own kind, with the token beside it.
	mu := reentrant.New(newClient(t, s), "invoices:7", nil)
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(lctx) })
	if l := read(t, raw, "invoices:7"); l.Kind != inspect.KindLock || l.Fence != 5 {
		t.Fatalf("a held lock with a fence token: kind %q, fence token %d; want a lock with fence token 5", l.Kind, l.Fence)
	}
	want := []found{{"invoices:7", inspect.KindFence}, {"invoices:7", inspect.KindLock}, {"items:{8}", inspect.KindFence}}
	if got := find(t, raw, ""); !slices.Equal(got, want) {
		t.Fatalf("Find = %v, want %v (no record under the guard's keys' names)", got, want)
	}
}

type found struct {
	name string
	kind inspect.Kind
}

// find returns what Find finds for pattern, by name and kind.
func find(t testing.TB, raw redis.UniversalClient, pattern string) []found {
	t.Helper()
	var got []found
	if err := inspect.Find(context.Background(), raw, pattern, func(name string, kind inspect.Kind) error {
		got = append(got, found{name, kind})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b found) int {
		return cmp.Or(strings.Compare(a.name, b.name), strings.Compare(string(a.kind), string(b.kind)))
	})
	return got
}

// TestGroupValues names the values a group lock's holders hold, given
// the values and the codec their clients hash them with, and tells the
// values nobody holds.
func TestGroupValues(t *testing.T) {
	raw := srv.Client(t)
	group := redistest.Key(t)
	mu := grouplock.New(newClient(t, srv), group, []string{"Jack_001", "Mary_002"}, &grouplock.Options{Codec: grouplock.StringCodec})
	lctx, err := mu.Lock(relock.WithNewOwner(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(lctx) })
	l := read(t, raw, group)
	if notHeld := l.NameValues(grouplock.Kryo5Codec, []string{"Jack_001"}); !slices.Equal(notHeld, []string{"Jack_001"}) ||
		!slices.Equal(l.Holders[0].ValueNames, []string{"", ""}) {
		t.Fatalf("under the wrong codec: not held %v, names %q; want none named", notHeld, l.Holders[0].ValueNames)
	}
	notHeld := l.NameValues(grouplock.StringCodec, []string{"Zoe_003", "Mary_002", "Jack_001"})
	h := l.Holders[0]
	var names []string
	for i, f := range h.Values {
		if want := grouplock.StringCodec.Field(h.ValueNames[i]); f != want {
			t.Fatalf("value %q named %q, whose field is %q", f, h.ValueNames[i], want)
		}
		names = append(names, h.ValueNames[i])
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"Jack_001", "Mary_002"}) || !slices.Equal(notHeld, []string{"Zoe_003"}) {
		t.Fatalf("named %v, not held %v; want Jack_001 and Mary_002 named, Zoe_003 not held", names, notHeld)
	}
}

// TestElectionOf names the election whose fair lock relock's
// relock_election:{<name>} is.
func TestElectionOf(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	t.Cleanup(func() { raw.Del(bg, "relock_election_term:{"+name+"}", "relock_election_log:{"+name+"}") })
	e := election.New(newClient(t, srv), name, nil)
	lead, err := e.Campaign(bg, "host-a")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Resign(lead) })
	if l := read(t, raw, "relock_election:{"+name+"}"); l.Kind != inspect.KindLock || l.ElectionOf != name {
		t.Fatalf("the election's lock: kind %q, of election %q; want a lock of election %q", l.Kind, l.ElectionOf, name)
	}
	if l := read(t, raw, name); l.ElectionOf != "" {
		t.Fatalf("the election itself: of election %q, want none", l.ElectionOf)
	}
}

// TestDoctorCountsRecords checks that Doctor's Records counts what Find
// finds (and relock list lists), of every kind, though it reads only
// some of them.
func TestDoctorCountsRecords(t *testing.T) {
	s := redistest.Start(t)
	raw := s.Client(t)
	bg := context.Background()
	rc := newClient(t, s)
	mu := reentrant.New(rc, "orders:1", &reentrant.Options{Fencing: true})
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(lctx) })
	raw.Set(bg, "hits", 3, 0)
	if err := fence.NewRedis(raw).Set(bg, "invoices:7", 1, "{invoices:7}:total", "x", 0); err != nil {
		t.Fatal(err)
	}
	g := grouplock.New(rc, "seats", []string{"a1"}, nil)
	gctx, err := g.Lock(relock.WithNewOwner(bg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Unlock(gctx) })
	e := election.New(rc, "nightly", nil)
	lead, err := e.Campaign(bg, "me")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Resign(lead) })

	got := find(t, raw, "")
	if len(got) != 7 { // orders:1 twice (lock, fencing), hits, invoices:7, seats, nightly and its lock
		t.Fatalf("Find = %v, want 7 records", got)
	}
	r := doctor(t, raw, nil)
	if r.Records != len(got) {
		t.Fatalf("Doctor counted %d records, Find found %d: %v", r.Records, len(got), got)
	}
	// Kept for good: the fencing counter, the fence token and the term.
	wantKept := map[inspect.Kind]int{inspect.KindFencing: 1, inspect.KindFence: 1, inspect.KindElection: 1}
	if !maps.Equal(r.Kept, wantKept) {
		t.Fatalf("Doctor's Kept = %v, want %v", r.Kept, wantKept)
	}
	if r := doctor(t, raw, &inspect.DoctorOptions{Pattern: "orders:*"}); r.Records != 2 {
		t.Fatalf("Doctor of orders:* counted %d records, want the lock and its fencing counter", r.Records)
	}
}

// TestTTLString checks a TTL's words: "no expiry" for a key without one,
// "-" where there is no key.
func TestTTLString(t *testing.T) {
	for ttl, want := range map[inspect.TTL]string{
		inspect.TTL(1500 * time.Millisecond): "1.5s",
		inspect.NoExpiry:                     "no expiry",
		inspect.NoKey:                        "-",
	} {
		if got := ttl.String(); got != want {
			t.Errorf("TTL(%d).String() = %q, want %q", ttl, got, want)
		}
	}
}
