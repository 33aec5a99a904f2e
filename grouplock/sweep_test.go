package grouplock_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestSweep: values whose fixed leases run out without an unlock, next to
// one value the watchdog keeps held, do not pile up in the group's hash:
// the scripts sweep them, and once nothing is held the hash goes. Before
// the sweep, 400 such values left 1 203 fields.
func TestSweep(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	raw := srv.Client(t)
	keeper := grouplock.New(rc, group, []string{"kept"}, nil)
	kctx, err := keeper.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	const values, lease = 400, 20 * time.Millisecond
	for i := range values {
		mu := grouplock.New(rc, group, []string{"v" + strconv.Itoa(i)}, &grouplock.Options{Lease: lease})
		if _, err := mu.TryLock(bg, 0); err != nil {
			t.Fatalf("value %d: %v", i, err)
		}
		time.Sleep(time.Millisecond)
	}
	// At most lease/1ms values are live, 3 fields each; the sweep leaves
	// about one dead value for fifteen live ones.
	if n := raw.HLen(bg, group).Val(); n > 150 {
		t.Errorf("%d fields after %d values with %v leases, want at most 150", n, values, lease)
	}
	if held, err := keeper.IsHeld(kctx); err != nil || !held {
		t.Fatalf("the watchdog's value: held %v, %v", held, err)
	}
	redistest.Unlock(t, keeper, kctx)
	time.Sleep(2 * lease)
	probe := grouplock.New(rc, group, []string{"probe"}, nil)
	for i := 0; raw.Exists(bg, group).Val() == 1; i++ {
		if i == 100 {
			t.Fatalf("the hash still has %d fields after %d probes, nothing held", raw.HLen(bg, group).Val(), i)
		}
		pctx, err := probe.TryLock(bg, 0)
		if err != nil {
			t.Fatal(err)
		}
		redistest.Unlock(t, probe, pctx)
	}
}

// TestUnlockAfterLease: an unlock that comes after its fixed lease ran
// out fails and leaves none of the hold's fields, and the hash's TTL then
// follows the holds still live, not the lease of the one released.
func TestUnlockAfterLease(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	raw := srv.Client(t)
	other := grouplock.New(rc, group, []string{"other"}, &grouplock.Options{Lease: 2 * time.Second})
	octx, err := other.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	late := grouplock.New(rc, group, []string{"late"}, &grouplock.Options{Lease: 10 * time.Millisecond})
	lctx, err := late.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond)
	if err := late.Unlock(lctx); err == nil {
		t.Error("unlock after the lease succeeded")
	}
	if n := raw.HLen(bg, group).Val(); n != 3 {
		t.Errorf("hash has %d fields after the late unlock, want the live value's 3: %v", n, fieldNames(t, group))
	}

	watched := grouplock.New(rc, group, []string{"watched"}, nil)
	wctx, err := watched.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	redistest.Unlock(t, watched, wctx)
	if ttl := raw.PTTL(bg, group).Val(); ttl > 2*time.Second {
		t.Errorf("hash's TTL %v after the watchdog's value went, want at most the live lease 2s", ttl)
	}
	redistest.Unlock(t, other, octx)
}

// TestSweepKeepsRedisson: a Redisson holder's live value survives the
// sweeps of relock's churn, and Redisson's own unlock releases it; its
// value whose lease ran out is swept, and Redisson's acquire takes it
// again.
func TestSweepKeepsRedisson(t *testing.T) {
	srv.RequireReal(t)
	rc := newClient(t, nil)
	group := redistest.Key(t)
	raw := srv.Client(t)
	java := newRedisson(t)
	if ok, _ := java.acquire(t, group, jackKryo, maryKryo); !ok {
		t.Fatal("Redisson could not take a free group")
	}
	raw.HSet(bg, group, maryKryo+":"+java.owner+":expire_time", time.Now().Add(-time.Second).UnixMilli())
	for i := range 50 {
		mu := grouplock.New(rc, group, []string{"v" + strconv.Itoa(i)}, nil)
		lctx, err := mu.TryLock(bg, 0)
		if err != nil {
			t.Fatal(err)
		}
		redistest.Unlock(t, mu, lctx)
	}
	if raw.HExists(bg, group, maryKryo).Val() {
		t.Errorf("Redisson's expired value was not swept: %v", fieldNames(t, group))
	}
	jack := grouplock.New(rc, group, []string{"Jack_001"}, nil)
	if _, err := jack.TryLock(bg, 0); err == nil {
		t.Fatal("relock took the value Redisson holds")
	}
	java.unlock(t, group, jackKryo)
	if ok, _ := java.acquire(t, group, jackKryo, maryKryo); !ok {
		t.Fatal("Redisson could not take its values again")
	}
	java.unlock(t, group, jackKryo, maryKryo)
	if raw.Exists(bg, group).Val() == 1 {
		t.Errorf("hash left after Redisson's unlock: %v", fieldNames(t, group))
	}
}
