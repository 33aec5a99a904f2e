package grouplock_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

var bg = context.Background()

// fieldNames returns the hash's fields, sorted.
func fieldNames(t *testing.T, group string) []string {
	t.Helper()
	m := srv.Client(t).HGetAll(bg, group).Val()
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func TestInput(t *testing.T) {
	rc := newClient(t, nil)
	for _, tc := range []struct {
		what   string
		rc     *relock.Client
		group  string
		values []string
		opts   *grouplock.Options
	}{
		{"nil client", nil, "g", []string{"a"}, nil},
		{"empty group", rc, "", []string{"a"}, nil},
		{"bad hash tag", rc, "g{", []string{"a"}, nil},
		{"no values", rc, "g", nil, nil},
		{"empty value", rc, "g", []string{"a", ""}, nil},
		{"duplicate value", rc, "g", []string{"a", "b", "a"}, nil},
		{"invalid UTF-8", rc, "g", []string{"a\xff"}, nil},
		{"negative lease", rc, "g", []string{"a"}, &grouplock.Options{Lease: -time.Second}},
		{"unknown codec", rc, "g", []string{"a"}, &grouplock.Options{Codec: 7}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			mu := grouplock.New(tc.rc, tc.group, tc.values, tc.opts)
			_, lerr := mu.Lock(bg)
			_, terr := mu.TryLock(bg, 0)
			_, ferr := mu.ForceUnlock(bg)
			_, ierr := mu.IsLocked(bg)
			for _, err := range []error{lerr, terr, mu.Unlock(bg), ferr, ierr} {
				if !errors.Is(err, relock.ErrInvalidArgument) {
					t.Errorf("error %v, want one matching relock.ErrInvalidArgument", err)
				}
			}
		})
	}
	if _, err := grouplock.New(rc, "g", []string{"a"}, nil).TryLock(bg, -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("negative wait: %v", err)
	}
}

// TestLayout checks Redisson's record: per value the holder, its
// expire_time about a lease ahead and its lock_count, and the hash's TTL.
func TestLayout(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	mu := grouplock.New(rc, group, []string{"Jack_001", "Mary_002"}, &grouplock.Options{Codec: grouplock.StringCodec})
	lctx := redistest.Lock(t, mu, bg)
	defer redistest.Unlock(t, mu, lctx)
	raw := srv.Client(t)
	all := raw.HGetAll(bg, group).Val()
	if len(all) != 6 {
		t.Fatalf("hash %v, want 6 fields", all)
	}
	now := time.Now().UnixMilli()
	for _, f := range []string{"7pNoDdizVy2xY792MaFv+w", "kIX2DFOX4IWct7G7K6tV9A"} {
		owner := all[f]
		if !strings.HasPrefix(owner, rc.ID()+":") {
			t.Fatalf("field %s = %q, want the owner of client %s", f, owner, rc.ID())
		}
		exp, _ := strconv.ParseInt(all[f+":"+owner+":expire_time"], 10, 64)
		if d := exp - now; d < 25000 || d > 31000 {
			t.Errorf("expire_time %d is %d ms ahead, want about 30000", exp, d)
		}
		if c := all[f+":"+owner+":lock_count"]; c != "1" {
			t.Errorf("lock_count %q, want 1", c)
		}
	}
	if ttl := raw.PTTL(bg, group).Val(); ttl < 25*time.Second || ttl > 30*time.Second {
		t.Errorf("PTTL %v, want about 30s", ttl)
	}
}

// TestExclusion runs owners on two clients over overlapping sets: no
// value is ever held by two at once.
func TestExclusion(t *testing.T) {
	srv.RequireReal(t)
	group := redistest.Key(t)
	sets := [][]string{{"a", "b"}, {"b", "c"}, {"c", "d", "a"}, {"d"}}
	var mu sync.Mutex
	inUse := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for c := range 2 {
		rc := newClient(t, nil)
		for i, set := range sets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m := grouplock.New(rc, group, set, nil)
				for range 15 {
					ctx, cancel := context.WithTimeout(relock.WithNewOwner(bg), 20*time.Second)
					lctx, err := m.Lock(ctx)
					if err != nil {
						cancel()
						errs <- err
						return
					}
					mu.Lock()
					for _, v := range set {
						if inUse[v] {
							errs <- errors.New("value " + v + " held twice, by set " + strconv.Itoa(c) + "/" + strconv.Itoa(i))
						}
						inUse[v] = true
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
					mu.Lock()
					for _, v := range set {
						inUse[v] = false
					}
					mu.Unlock()
					err = m.Unlock(lctx)
					cancel()
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := srv.Client(t).Exists(bg, group).Val(); n != 0 {
		t.Errorf("group left behind: %v", fieldNames(t, group))
	}
}

// TestAllOrNothing: one held value blocks the whole set, and a failed
// try, waiting or not, leaves nothing of its own in Redis.
func TestAllOrNothing(t *testing.T) {
	srv.RequireReal(t)
	rcA, rcB := newClient(t, nil), newClient(t, nil)
	group := redistest.Key(t)
	held := grouplock.New(rcA, group, []string{"b"}, nil)
	lctx := redistest.Lock(t, held, bg)
	before := fieldNames(t, group)
	all := grouplock.New(rcB, group, []string{"a", "b", "c"}, nil)
	for _, wait := range []time.Duration{0, 100 * time.Millisecond} {
		if _, err := all.TryLock(bg, wait); !errors.Is(err, relock.ErrNotAcquired) {
			t.Fatalf("TryLock(%v) with b held: %v, want relock.ErrNotAcquired", wait, err)
		}
		if after := fieldNames(t, group); !slices.Equal(before, after) {
			t.Fatalf("TryLock(%v) changed the hash: %v, was %v", wait, after, before)
		}
	}
	if locked, err := all.IsLocked(bg); err != nil || !locked {
		t.Errorf("IsLocked = %v, %v; want true (b is held)", locked, err)
	}
	redistest.Unlock(t, held, lctx)
	bctx := redistest.Lock(t, all, bg)
	if held, err := all.IsHeld(bctx); err != nil || !held {
		t.Errorf("IsHeld = %v, %v; want true", held, err)
	}
	redistest.Unlock(t, all, bctx)
}

// TestReentry counts holds per value as Redisson does: a Lock with the
// returned context adds one to every value, and sets of one owner that
// share a value count a hold each on it.
func TestReentry(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	ab := grouplock.New(rc, group, []string{"a", "b"}, &grouplock.Options{Codec: grouplock.StringCodec})
	ac := grouplock.New(rc, group, []string{"a", "c"}, &grouplock.Options{Codec: grouplock.StringCodec})
	raw := srv.Client(t)
	count := func(value string) string {
		f := grouplock.StringCodec.Field(value)
		owner := raw.HGet(bg, group, f).Val()
		return raw.HGet(bg, group, f+":"+owner+":lock_count").Val()
	}
	// One owner, whose holds of {a,b} and {a,c} end apart: the contexts
	// of both derive from owner, not from each other.
	owner := relock.WithNewOwner(bg)
	lctx := redistest.Lock(t, ab, owner)
	inner := redistest.Lock(t, ab, lctx)
	if a, b := count("a"), count("b"); a != "2" || b != "2" {
		t.Fatalf("after re-entry lock_count a=%s b=%s, want 2 and 2", a, b)
	}
	cctx := redistest.Lock(t, ac, owner)
	if a, c := count("a"), count("c"); a != "3" || c != "1" {
		t.Fatalf("after {a,c} lock_count a=%s c=%s, want 3 and 1", a, c)
	}
	redistest.Unlock(t, ab, inner)
	redistest.Unlock(t, ab, lctx)
	if lctx.Err() == nil {
		t.Error("the context of {a,b} is not cancelled by its last Unlock")
	}
	if a, b := count("a"), raw.HExists(bg, group, grouplock.StringCodec.Field("b")).Val(); a != "1" || b {
		t.Fatalf("after releasing {a,b}: lock_count a=%s, b still there: %v", a, b)
	}
	if cctx.Err() != nil {
		t.Fatalf("the context of {a,c} ended: %v", context.Cause(cctx))
	}
	redistest.Unlock(t, ac, cctx)
	if n := raw.Exists(bg, group).Val(); n != 0 {
		t.Errorf("group left behind: %v", fieldNames(t, group))
	}
	if err := ab.Unlock(cctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Unlock of a released set: %v, want relock.ErrNotHeld", err)
	}
}

// TestWakeUp: a waiter is woken by the release, long before the lease it
// waits for would run out.
func TestWakeUp(t *testing.T) {
	srv.RequireReal(t)
	rcA, rcB := newClient(t, nil), newClient(t, nil)
	group := redistest.Key(t)
	holder := grouplock.New(rcA, group, []string{"a", "b"}, nil)
	lctx := redistest.Lock(t, holder, bg)
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 20*time.Second)
		defer cancel()
		m := grouplock.New(rcB, group, []string{"b", "c"}, nil)
		wctx, err := m.Lock(ctx)
		if err == nil {
			err = m.Unlock(wctx)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it wait
	released := time.Now()
	redistest.Unlock(t, holder, lctx)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if d := time.Since(released); d > 5*time.Second {
		t.Errorf("waiter took the values %v after the release; its lease bound was 30s", d)
	}
}

// TestLease: a fixed lease ends the hold and frees the values; with the
// watchdog, the lease is renewed past its length.
func TestLease(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	timeout := redistest.Short(600*time.Millisecond, 300*time.Millisecond)
	rc := newClient(t, &relock.Options{WatchdogTimeout: timeout})
	other := newClient(t, nil)
	group := redistest.Key(t)

	fixed := grouplock.New(rc, group, []string{"a", "b"}, &grouplock.Options{Lease: 300 * time.Millisecond})
	lctx := redistest.Lock(t, fixed, bg)
	if _, ok := lctx.Deadline(); !ok {
		t.Error("a fixed lease's context has no deadline")
	}
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a fixed lease's context not ended after the lease")
	}
	taker := grouplock.New(other, group, []string{"b"}, nil)
	tctx, err := taker.TryLock(bg, 2*time.Second)
	if err != nil {
		t.Fatalf("value not free after the fixed lease: %v", err)
	}
	redistest.Unlock(t, taker, tctx)

	renewed := grouplock.New(rc, group, []string{"a", "b"}, nil)
	rctx := redistest.Lock(t, renewed, bg)
	time.Sleep(timeout * 5 / 2) // 2.5 watchdog timeouts
	if rctx.Err() != nil {
		t.Fatalf("renewed hold ended: %v", context.Cause(rctx))
	}
	if _, err := taker.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock of a renewed value: %v, want relock.ErrNotAcquired", err)
	}
	redistest.Unlock(t, renewed, rctx)
}

// TestLost: a hold whose record is deleted is ended by the watchdog's
// next renewal.
func TestLost(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, &relock.Options{WatchdogTimeout: 600 * time.Millisecond})
	group := redistest.Key(t)
	mu := grouplock.New(rc, group, []string{"a", "b"}, nil)
	lctx := redistest.Lock(t, mu, bg)
	srv.Client(t).HDel(bg, group, grouplock.Kryo5Codec.Field("b"))
	select {
	case <-lctx.Done():
		if !errors.Is(context.Cause(lctx), relock.ErrLockLost) {
			t.Errorf("cause %v, want relock.ErrLockLost", context.Cause(lctx))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hold with a value gone not ended")
	}
	if err := mu.Unlock(lctx); !errors.Is(err, relock.ErrNotHeld) {
		t.Errorf("Unlock after the loss: %v, want relock.ErrNotHeld", err)
	}
}

// TestForceUnlock: another client frees the values; the holder's context
// is cancelled with relock.ErrLockLost, and the values are free.
func TestForceUnlock(t *testing.T) {
	srv.RequireReal(t)
	rcA, rcB := newClient(t, nil), newClient(t, nil)
	group := redistest.Key(t)
	values := []string{"a", "b", "c"}
	lctx := redistest.Lock(t, grouplock.New(rcA, group, values, nil), bg)
	// A notice sent before the holder's client listens is lost: it would
	// learn at its next renewal.
	redistest.AwaitListening(t, srv.Client(t), rcA)
	forcer := grouplock.New(rcB, group, values, nil)
	if ok, err := forcer.ForceUnlock(bg); err != nil || !ok {
		t.Fatalf("ForceUnlock = %v, %v; want true", ok, err)
	}
	select {
	case <-lctx.Done():
		if !errors.Is(context.Cause(lctx), relock.ErrLockLost) {
			t.Errorf("cause %v, want relock.ErrLockLost", context.Cause(lctx))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("holder not told of the force-unlock")
	}
	if n := srv.Client(t).Exists(bg, group).Val(); n != 0 {
		t.Errorf("group left behind: %v", fieldNames(t, group))
	}
	if ok, err := forcer.ForceUnlock(bg); err != nil || ok {
		t.Errorf("second ForceUnlock = %v, %v; want false", ok, err)
	}
	bctx := redistest.Lock(t, forcer, bg)
	redistest.Unlock(t, forcer, bctx)
}
