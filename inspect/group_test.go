package inspect_test

import (
	"context"
	"slices"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// A group lock (Redisson's RedissonFasterMultiLock) reads as KindGroup,
// its holder naming the values' fields it holds, and reads as free once
// unlocked.
func TestGroup(t *testing.T) {
	raw := srv.Client(t)
	rc := newClient(t, srv)
	group := redistest.Key(t)
	values := []string{"Jack_001", "Mary_002"}
	mu := grouplock.New(rc, group, values, nil)
	lctx, err := mu.Lock(relock.WithNewOwner(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	l := read(t, raw, group)
	if l.Kind != inspect.KindGroup || len(l.Holders) != 1 {
		t.Fatalf("held group: kind %q, holders %+v", l.Kind, l.Holders)
	}
	h := l.Holders[0]
	var want []string
	for _, v := range values {
		want = append(want, grouplock.Kryo5Codec.Field(v))
	}
	slices.Sort(want)
	if h.Library != inspect.Relock || h.ClientID != rc.ID() || h.Holds != 1 || !slices.Equal(h.Values, want) {
		t.Fatalf("holder %+v, want relock client %s, 1 hold, values %v", h, rc.ID(), want)
	}
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	if l := read(t, raw, group); l.Held() {
		t.Fatalf("unlocked group still held: kind %q, holders %+v", l.Kind, l.Holders)
	}
}
