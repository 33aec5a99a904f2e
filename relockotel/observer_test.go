package relockotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/relockotel"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
)

// The attributes the tests expect, spelled out rather than taken from
// the package: their names are part of its contract.
var (
	kindReentrant = attribute.String("relock.lock.kind", "reentrant")
	nameKey       = attribute.Key("relock.lock.name")
	opLock        = attribute.String("relock.operation.name", "Lock")
	opTryLock     = attribute.String("relock.operation.name", "TryLock")
	errorTypeKey  = attribute.Key("error.type")
	outcomeKey    = attribute.Key("relock.acquire.outcome")
	attemptsKey   = attribute.Key("relock.acquire.attempts")
	causeKey      = attribute.Key("relock.hold.end_cause")
)

// TestContendedAcquire: a Lock that waits ~100 ms for a holder on
// another client is one acquire.duration point (Lock, acquired, sum >=
// 0.1 s) and one relock.Lock span, a child of the caller's, with the
// lock's name, kind, operation, attempts and outcome, and the parent of
// the lock's Redis commands; a TryLock(0) that gives up is an acquire
// (TryLock, "not_acquired") whose relock.TryLock span is not an error;
// the Unlock is a relock.Unlock span without error, the parent of the
// unlock's command.
func TestContendedAcquire(t *testing.T) {
	e := newEnv(t, false)
	bg := context.Background()
	name := t.Name()
	cmds := &commands{}
	rdb := e.redis(t)
	rdb.AddHook(cmds)
	rc, err := relock.New(rdb, &relock.Options{Observer: e.obs})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	holder := reentrant.New(e.client(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}

	mu := reentrant.New(rc, name, nil)
	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(0) = %v, want ErrNotAcquired", err)
	}
	pctx, parent := e.tp.Tracer("test").Start(bg, "caller")
	got := make(chan context.Context, 1)
	go func() {
		lctx, err := mu.Lock(pctx)
		if err != nil {
			t.Error(err)
		}
		got <- lctx
	}()
	eventually(t, "the Lock waits", func() bool { return rc.Stats().Waiters == 1 })
	time.Sleep(100 * time.Millisecond)
	if err := holder.Unlock(hctx); err != nil {
		t.Fatal(err)
	}
	lctx := <-got
	if lctx == nil {
		t.FailNow()
	}
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	parent.End()

	ms := e.collect(t)
	p, ok := histogram(t, ms, "relock.acquire.duration", kindReentrant, opLock, outcomeKey.String("acquired"))
	if !ok || p.Count != 1 || p.Sum < 0.1 {
		t.Errorf("acquire.duration, acquired: count %d, sum %.3f (found %v), want count 1, sum >= 0.1", p.Count, p.Sum, ok)
	}
	p, ok = histogram(t, ms, "relock.acquire.duration", kindReentrant, opTryLock, outcomeKey.String("not_acquired"))
	if !ok || p.Count != 1 {
		t.Errorf("acquire.duration, not_acquired: count %d (found %v), want 1", p.Count, ok)
	}
	p, ok = histogram(t, ms, "relock.hold.duration", kindReentrant, causeKey.String("unlock"))
	if !ok || p.Count != 1 {
		t.Errorf("hold.duration, unlock: count %d, sum %.3f (found %v), want count 1", p.Count, p.Sum, ok)
	}

	tries, locks := e.ended("relock.TryLock"), e.ended("relock.Lock")
	if len(tries) != 1 || len(locks) != 1 {
		t.Fatalf("%d relock.TryLock and %d relock.Lock spans, want 1 each", len(tries), len(locks))
	}
	try, lock := tries[0], locks[0]
	for _, s := range []sdktrace.ReadOnlySpan{try, lock} {
		if attr(s, nameKey).AsString() != name || attr(s, kindReentrant.Key).AsString() != "reentrant" {
			t.Errorf("span %v: want name %q, kind reentrant", s.Attributes(), name)
		}
		if s.Status().Code == codes.Error {
			t.Errorf("span %v has status %v", s.Attributes(), s.Status())
		}
		if op := s.Name()[len("relock."):]; attr(s, opLock.Key).AsString() != op {
			t.Errorf("span %s: operation %v, want %s", s.Name(), attr(s, opLock.Key), op)
		}
	}
	if got := attr(try, outcomeKey).AsString(); got != "not_acquired" {
		t.Errorf("TryLock(0) span outcome %q, want not_acquired", got)
	}
	if got := attr(lock, outcomeKey).AsString(); got != "acquired" {
		t.Errorf("Lock span outcome %q, want acquired", got)
	}
	if n := attr(lock, attemptsKey).AsInt64(); n < 1 {
		t.Errorf("Lock span attempts %d, want >= 1", n)
	}
	if lock.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("Lock span's parent %v, want the caller's span %v", lock.Parent().SpanID(), parent.SpanContext().SpanID())
	}
	if d := lock.EndTime().Sub(lock.StartTime()); d < 100*time.Millisecond {
		t.Errorf("Lock span lasted %v, want >= 100ms", d)
	}
	unlocks := e.ended("relock.Unlock")
	if len(unlocks) != 1 || unlocks[0].Status().Code != codes.Unset || attr(unlocks[0], nameKey).AsString() != name {
		t.Fatalf("relock.Unlock spans %v, want one without error", unlocks)
	}
	for _, s := range []sdktrace.ReadOnlySpan{try, lock, unlocks[0]} {
		if n := cmds.under(s.SpanContext().SpanID()); n == 0 {
			t.Errorf("no Redis command ran under the %s span", s.Name())
		}
	}
}

// TestUnlockError: an Unlock by an owner that holds no hold is a
// relock.Unlock span with error status and the error recorded.
func TestUnlockError(t *testing.T) {
	e := newEnv(t, false)
	mu := reentrant.New(e.observed(t, 0), t.Name(), nil)
	err := mu.Unlock(context.Background())
	if !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("Unlock by a non-owner = %v, want ErrNotHeld", err)
	}
	spans := e.ended("relock.Unlock")
	if len(spans) != 1 {
		t.Fatalf("%d relock.Unlock spans, want 1", len(spans))
	}
	s := spans[0]
	if st := s.Status(); st.Code != codes.Error || st.Description != err.Error() {
		t.Errorf("status %+v, want Error %q", st, err)
	}
	if ev := s.Events(); len(ev) != 1 || ev[0].Name != "exception" {
		t.Errorf("events %+v, want the error recorded", ev)
	}
	if got := attr(s, errorTypeKey).AsString(); got != "not_held" {
		t.Errorf("error.type %q, want not_held", got)
	}
}

// TestLostLease: the lock's key deleted under its holder ends the hold
// "lost" and counts one lost lease.
func TestLostLease(t *testing.T) {
	e := newEnv(t, false)
	const lease = 600 * time.Millisecond
	bg := context.Background()
	mu := reentrant.New(e.observed(t, lease), t.Name(), nil)
	lctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.redis(t).Del(bg, t.Name()).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lctx.Done():
	case <-time.After(waitLimit):
		t.Fatal("lost lease not reported")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", cause)
	}
	// The Observer is told just after the context is cancelled.
	eventually(t, "relock.lease.lost", func() bool {
		_, ok := value(t, e.collect(t), "relock.lease.lost", kindReentrant)
		return ok
	})
	ms := e.collect(t)
	if n, _ := value(t, ms, "relock.lease.lost", kindReentrant); n != 1 {
		t.Errorf("relock.lease.lost = %d, want 1", n)
	}
	if p, ok := histogram(t, ms, "relock.hold.duration", kindReentrant, causeKey.String("lost")); !ok || p.Count != 1 {
		t.Errorf("hold.duration, lost: count %d, sum %.3f (found %v), want count 1", p.Count, p.Sum, ok)
	}
}

// TestWatchdogRounds: holding a lock for more than one renewal interval
// records rounds, renewals, and zero failures.
func TestWatchdogRounds(t *testing.T) {
	e := newEnv(t, false)
	const lease = 600 * time.Millisecond // renewed every 200 ms
	mu := reentrant.New(e.observed(t, lease), t.Name(), nil)
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(lease / 2)
	eventually(t, "a watchdog round", func() bool {
		p, ok := histogram(t, e.collect(t), "relock.watchdog.round.duration")
		return ok && p.Count >= 1
	})
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}
	ms := e.collect(t)
	p, _ := histogram(t, ms, "relock.watchdog.round.duration")
	if p.Sum <= 0 {
		t.Errorf("round.duration sum %v, want > 0", p.Sum)
	}
	if n, _ := value(t, ms, "relock.watchdog.renewals"); n < 1 {
		t.Errorf("renewals = %d, want >= 1", n)
	}
	if n, ok := value(t, ms, "relock.watchdog.renewal.failures"); !ok || n != 0 {
		t.Errorf("renewal.failures = %d (found %v), want 0", n, ok)
	}
}

// TestClose: Close ends a hold "closed" and a waiting acquire "closed",
// whose span is not an error.
func TestClose(t *testing.T) {
	e := newEnv(t, false)
	bg := context.Background()
	rc := e.observed(t, 0)
	hctx, err := reentrant.New(rc, t.Name()+":held", nil).Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	other := reentrant.New(e.client(t, nil), t.Name()+":waited", nil)
	octx, err := other.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock(octx)
	waited := make(chan error, 1)
	go func() {
		_, err := reentrant.New(rc, other.Name(), nil).Lock(bg)
		waited <- err
	}()
	eventually(t, "the Lock waits", func() bool { return rc.Stats().Waiters == 1 })
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("Lock ended by Close: %v, want ErrClosed", err)
	}
	// Kept to here: a lock context dropped sooner is a forgotten unlock.
	if cause := context.Cause(hctx); !errors.Is(cause, relock.ErrClosed) {
		t.Fatalf("lock context ended by Close: cause %v, want ErrClosed", cause)
	}

	ms := e.collect(t)
	if p, ok := histogram(t, ms, "relock.hold.duration", kindReentrant, causeKey.String("closed")); !ok || p.Count != 1 {
		t.Errorf("hold.duration, closed: count %d, sum %.3f (found %v), want count 1", p.Count, p.Sum, ok)
	}
	if p, ok := histogram(t, ms, "relock.acquire.duration", kindReentrant, opLock, outcomeKey.String("closed")); !ok || p.Count != 1 {
		t.Errorf("acquire.duration, closed: count %d, sum %.3f (found %v), want count 1", p.Count, p.Sum, ok)
	}
	if _, ok := value(t, ms, "relock.lease.lost", kindReentrant); ok {
		t.Error("relock.lease.lost counted a hold ended by Close")
	}
	for _, s := range e.ended("relock.Lock") {
		if attr(s, outcomeKey).AsString() == "closed" && s.Status().Code == codes.Error {
			t.Errorf("span of an acquire ended by Close has status %v", s.Status())
		}
	}
}

// TestLockNameAttribute: lock names are on the metrics only when asked
// for.
func TestLockNameAttribute(t *testing.T) {
	for _, names := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[names], func(t *testing.T) {
			e := newEnv(t, names)
			name := t.Name()
			mu := reentrant.New(e.observed(t, 0), name, nil)
			lctx, err := mu.Lock(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := mu.Unlock(lctx); err != nil {
				t.Fatal(err)
			}
			acquired := []attribute.KeyValue{kindReentrant, opLock, outcomeKey.String("acquired")}
			unlocked := []attribute.KeyValue{kindReentrant, causeKey.String("unlock")}
			if names {
				acquired = append(acquired, nameKey.String(name))
				unlocked = append(unlocked, nameKey.String(name))
			}
			ms := e.collect(t)
			if p, ok := histogram(t, ms, "relock.acquire.duration", acquired...); !ok || p.Count != 1 {
				t.Errorf("acquire.duration with exactly %v: count %d (found %v), want 1", acquired, p.Count, ok)
			}
			if p, ok := histogram(t, ms, "relock.hold.duration", unlocked...); !ok || p.Count != 1 {
				t.Errorf("hold.duration with exactly %v: count %d (found %v), want 1", unlocked, p.Count, ok)
			}
			if s := e.ended("relock.Lock"); len(s) != 1 || attr(s[0], nameKey).AsString() != name {
				t.Errorf("relock.Lock spans %v, want one with the name", s)
			}
		})
	}
}

// TestOperations: each kind of acquire is a span named after its
// operation, with the kind and operation attributes, and so is a
// semaphore's Release; the scope names the module and its Version.
func TestOperations(t *testing.T) {
	e := newEnv(t, false)
	bg := context.Background()
	rc := e.observed(t, 0)
	sem := semaphore.New(rc, t.Name()+":sem", nil)
	if err := sem.AddPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	if err := sem.TryAcquire(bg, 2, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire of 2 of 1 permits = %v, want ErrNotAcquired", err)
	}
	if err := latch.New(rc, t.Name()+":latch", nil).Await(bg); err != nil {
		t.Fatal(err)
	}
	el := election.New(rc, t.Name()+":el", nil)
	if _, err := el.Campaign(bg, "a"); err != nil {
		t.Fatal(err)
	}
	if err := el.Resign(bg); err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct{ span, kind string }{
		{"relock.Acquire", "semaphore"},
		{"relock.Release", "semaphore"},
		{"relock.TryAcquire", "semaphore"},
		{"relock.Await", "latch"},
		{"relock.Campaign", "election"},
	} {
		spans := e.ended(want.span)
		if len(spans) != 1 {
			t.Errorf("%d %s spans, want 1", len(spans), want.span)
			continue
		}
		s := spans[0]
		if got := attr(s, kindReentrant.Key).AsString(); got != want.kind {
			t.Errorf("%s span of kind %q, want %q", want.span, got, want.kind)
		}
		if got := attr(s, opLock.Key).AsString(); "relock."+got != want.span {
			t.Errorf("%s span with operation %q", want.span, got)
		}
		if sc := s.InstrumentationScope(); sc.Name != "github.com/relock-go/relock/relockotel" || sc.Version != relockotel.Version {
			t.Errorf("%s span's scope %+v, want the module at %s", want.span, sc, relockotel.Version)
		}
	}
	ms := e.collect(t)
	p, ok := histogram(t, ms, "relock.acquire.duration", attribute.String("relock.lock.kind", "election"),
		attribute.String("relock.operation.name", "Campaign"), outcomeKey.String("acquired"))
	if !ok || p.Count != 1 {
		t.Errorf("acquire.duration of the Campaign: count %d (found %v), want 1", p.Count, ok)
	}
}

// TestFailedAcquire: an acquire that fails (a read lock's owner asking
// for the write lock) records error.type on its span and its duration.
func TestFailedAcquire(t *testing.T) {
	e := newEnv(t, false)
	bg := context.Background()
	rw := rwlock.New(e.observed(t, 0), t.Name(), nil)
	rctx, err := rw.RLock(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.RUnlock(rctx)
	if _, err := rw.Lock(rctx); !errors.Is(err, relock.ErrUpgrade) {
		t.Fatalf("Lock by a reader = %v, want ErrUpgrade", err)
	}
	kind := attribute.String("relock.lock.kind", "rwlock")
	p, ok := histogram(t, e.collect(t), "relock.acquire.duration", kind, opLock, outcomeKey.String("failed"), errorTypeKey.String("upgrade"))
	if !ok || p.Count != 1 {
		t.Errorf("acquire.duration, failed upgrade: count %d (found %v), want 1", p.Count, ok)
	}
	spans := e.ended("relock.Lock")
	if len(spans) != 2 {
		t.Fatalf("%d relock.Lock spans, want 2", len(spans))
	}
	if s := spans[1]; s.Status().Code != codes.Error || attr(s, errorTypeKey).AsString() != "upgrade" {
		t.Errorf("failed Lock span: status %v, error.type %q; want Error, upgrade", s.Status(), attr(s, errorTypeKey).AsString())
	}
}
