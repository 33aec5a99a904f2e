package semaphore_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// TestMaxCount: relock.MaxCount (2^53, the largest count a Lua number
// holds exactly, and the largest a call takes; TestBadPermits has the
// counts beyond it) is a count like any other, and a semaphore at the
// limit hands out exactly the permits it holds.
func TestMaxCount(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	s := semaphore.New(newClient(t, nil), name, nil)
	l := listen(t, raw, channelOf(name))

	if ok, err := s.TrySetPermits(bg, relock.MaxCount); err != nil || !ok {
		t.Fatalf("TrySetPermits(MaxCount) = %v, %v", ok, err)
	}
	l.expect("TrySetPermits(MaxCount)", strconv.Itoa(relock.MaxCount))
	if err := s.TryAcquire(bg, relock.MaxCount-1, 0); err != nil {
		t.Fatalf("TryAcquire(MaxCount-1) of MaxCount permits: %v", err)
	}
	if err := s.TryAcquire(bg, 1, 0); err != nil {
		t.Fatalf("TryAcquire(1) of the last permit: %v", err)
	}
	if err := s.TryAcquire(bg, 1, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(1) after all MaxCount were taken = %v, want ErrNotAcquired", err)
	}
	if err := s.Release(bg, relock.MaxCount-1); err != nil {
		t.Fatal(err)
	}
	l.expect("Release(MaxCount-1)", strconv.Itoa(relock.MaxCount-1))
	if err := s.TryAcquire(bg, relock.MaxCount, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(MaxCount) of MaxCount-1 permits = %v, want ErrNotAcquired", err)
	}
	assertCount(t, raw, name, strconv.Itoa(relock.MaxCount-1), noTTL, noTTL)
}

// TestPastMaxCount: releases may take the count past relock.MaxCount
// (each within it), where a Lua number rounds; the count stays exact in
// Redis, in what is published and in what is returned, and an acquire
// never takes more than there is: permits granted add up to the count.
// Only a sum beyond 64 bits is refused (by Redis), changing nothing.
func TestPastMaxCount(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	s := semaphore.New(newClient(t, nil), name, nil)
	l := listen(t, raw, channelOf(name))

	if err := s.Release(bg, relock.MaxCount); err != nil {
		t.Fatal(err)
	}
	l.expect("Release(MaxCount)", strconv.Itoa(relock.MaxCount))
	if err := s.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	// 2^53+1 is the first integer a double cannot hold: a count read as
	// a Lua number would be published as 2^53.
	l.expect("Release(1) at MaxCount", "9007199254740993")
	if n, err := s.AvailablePermits(bg); err != nil || n != relock.MaxCount+1 {
		t.Fatalf("AvailablePermits = %d, %v; want MaxCount+1", n, err)
	}
	// Rounded down, the count compares at least MaxCount, as it is; the
	// DECRBY subtracts exactly and leaves one permit, not none.
	if err := s.TryAcquire(bg, relock.MaxCount, 0); err != nil {
		t.Fatalf("TryAcquire(MaxCount) of MaxCount+1 permits: %v", err)
	}
	if err := s.TryAcquire(bg, 1, 0); err != nil {
		t.Fatalf("TryAcquire(1) of the last permit: %v", err)
	}
	if err := s.TryAcquire(bg, 1, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(1) after MaxCount+1 were taken = %v, want ErrNotAcquired", err)
	}

	// Past 10^17 a Lua number is written in exponent form, which no
	// listener (nor strconv.ParseInt) reads.
	const big = "100000000000000000"
	if err := raw.Set(bg, name, big, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.AddPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	l.expect("AddPermits(1) at 10^17", "100000000000000001")
	if err := s.Release(bg, relock.MaxCount); err != nil {
		t.Fatal(err)
	}
	l.expect("Release(MaxCount) at 10^17+1", "109007199254740993")
	if n, err := s.DrainPermits(bg); err != nil || n != 109007199254740993 {
		t.Fatalf("DrainPermits = %d, %v; want 109007199254740993", n, err)
	}

	if err := raw.Set(bg, name, strconv.FormatInt(math.MaxInt64, 10), 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(bg, 1); err == nil {
		t.Fatal("Release(1) at math.MaxInt64 succeeded")
	}
	l.expectNone("a refused Release")
	assertCount(t, raw, name, strconv.FormatInt(math.MaxInt64, 10), noTTL, noTTL)
}
