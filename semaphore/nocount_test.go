package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// TestNoCount: an acquire that gives up on a semaphore with no count
// says so, besides matching relock.ErrNotAcquired; one that gives up on
// a count too low, or because its context ended, says nothing of it. The
// semaphore's wire behaviour is Redisson's: nothing is written.
func TestNoCount(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := semaphore.New(rc, name, nil)

	for _, wait := range []time.Duration{0, 30 * time.Millisecond} {
		err := s.TryAcquire(bg, 1, wait)
		if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "no permits set") {
			t.Errorf("TryAcquire(%v) with no count = %v, want ErrNotAcquired saying no permits are set", wait, err)
		}
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Errorf("a failed acquire wrote the count: EXISTS %d", n)
	}
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	if err := s.Acquire(ctx, 1); !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Acquire with no count until ctx's deadline = %v, want ErrNotAcquired and DeadlineExceeded", err)
	}

	if ok, err := s.TrySetPermits(bg, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	for _, wait := range []time.Duration{0, 30 * time.Millisecond} {
		err := s.TryAcquire(bg, 2, wait)
		if !errors.Is(err, relock.ErrNotAcquired) || strings.Contains(err.Error(), "no permits set") {
			t.Errorf("TryAcquire(2, %v) of 1 permit = %v, want ErrNotAcquired, not saying no permits are set", wait, err)
		}
	}
	if err := s.TryAcquire(bg, 1, 0); err != nil {
		t.Fatalf("TryAcquire with a count set = %v", err)
	}
	if err := s.Release(bg, 1); err != nil {
		t.Fatal(err)
	}
}
