package relockotel_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// counts returns the values of the three up-down counters, failing t if
// one has another data point than a single one without attributes.
func counts(t *testing.T, ms map[string]metricdata.Aggregation) (holds, waiters, subscriptions int64) {
	t.Helper()
	get := func(name string) int64 {
		t.Helper()
		ps := points(t, ms, name)
		if len(ps) != 1 || ps[0].Attributes.Len() != 0 {
			t.Fatalf("%s data points %+v, want one without attributes", name, ps)
		}
		return ps[0].Value
	}
	return get("relock.hold.count"), get("relock.waiter.count"), get("relock.subscription.count")
}

// TestWatch: the up-down counters count a watched client's waiter and its
// subscription, then its hold; they sum two watched clients; after the
// last stop they are not observed.
func TestWatch(t *testing.T) {
	e := newEnv(t, false)
	bg := context.Background()
	name := t.Name()
	rc := e.observed(t, 0)
	if _, err := e.obs.Watch(nil); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("Watch(nil) = %v, want ErrInvalidArgument", err)
	}
	stop, err := e.obs.Watch(rc)
	if err != nil {
		t.Fatal(err)
	}
	holder := reentrant.New(e.client(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	mu := reentrant.New(rc, name, nil)
	got := make(chan context.Context, 1)
	go func() {
		lctx, err := mu.Lock(bg)
		if err != nil {
			t.Error(err)
		}
		got <- lctx
	}()
	eventually(t, "the Lock waits", func() bool { return rc.Stats().Waiters == 1 })
	holds, waiters, subs := counts(t, e.collect(t))
	if holds != 0 || waiters != 1 || subs < 1 {
		t.Errorf("while waiting: holds %d, waiters %d, subscriptions %d; want 0, 1, >= 1", holds, waiters, subs)
	}
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	lctx := <-got
	if lctx == nil {
		t.FailNow()
	}
	holds, waiters, _ = counts(t, e.collect(t))
	if holds != 1 || waiters != 0 {
		t.Errorf("while holding: holds %d, waiters %d; want 1, 0", holds, waiters)
	}

	// A second client, watched twice, holding a lock of its own: its hold
	// is added once.
	rc2 := e.observed(t, 0)
	stop2, err := e.obs.Watch(rc2)
	if err != nil {
		t.Fatal(err)
	}
	stop2again, err := e.obs.Watch(rc2)
	if err != nil {
		t.Fatal(err)
	}
	mu2 := reentrant.New(rc2, name+":2", nil)
	hctx2, err := mu2.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer mu2.Unlock(hctx2)
	if holds, _, _ = counts(t, e.collect(t)); holds != 2 {
		t.Errorf("two clients holding one lock each: holds %d, want 2", holds)
	}
	if err := stop2(); err != nil {
		t.Fatal(err)
	}
	if err := stop2(); err != nil {
		t.Fatalf("second call of a stop: %v", err)
	}
	if holds, _, _ = counts(t, e.collect(t)); holds != 2 {
		t.Errorf("one of the two Watches of a client stopped: holds %d, want 2", holds)
	}
	if err := stop2again(); err != nil {
		t.Fatal(err)
	}
	if holds, _, _ = counts(t, e.collect(t)); holds != 1 {
		t.Errorf("second client no longer watched: holds %d, want 1", holds)
	}

	if err := stop(); err != nil {
		t.Fatal(err)
	}
	ms := e.collect(t)
	for _, g := range []string{"relock.hold.count", "relock.waiter.count", "relock.subscription.count"} {
		if ps := points(t, ms, g); len(ps) != 0 {
			t.Errorf("%s observed after the last stop: %+v", g, ps)
		}
	}
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
}
