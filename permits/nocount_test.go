package permits_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestNoCount: an acquire that gives up on a semaphore with no count
// says so, besides matching relock.ErrNotAcquired; one that gives up
// with every permit held says nothing of it. The wire behaviour is
// Redisson's: nothing is written.
func TestNoCount(t *testing.T) {
	rc := redistest.Relock(t, srv.LockClient(t), nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := permits.New(rc, name, nil)

	for _, wait := range []time.Duration{0, 30 * time.Millisecond} {
		p, err := s.TryAcquire(bg, wait)
		if p != nil || !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "no permits set") {
			t.Errorf("TryAcquire(%v) with no count = %v, %v; want ErrNotAcquired saying no permits are set", wait, p, err)
		}
	}
	if n := raw.Exists(bg, name).Val(); n != 0 {
		t.Errorf("a failed acquire wrote the count: EXISTS %d", n)
	}

	if ok, err := s.TrySetPermits(bg, 1); !ok || err != nil {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	p, err := s.TryAcquire(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, wait := range []time.Duration{0, 30 * time.Millisecond} {
		if _, err := s.TryAcquire(bg, wait); !errors.Is(err, relock.ErrNotAcquired) || strings.Contains(err.Error(), "no permits set") {
			t.Errorf("TryAcquire(%v) with every permit held = %v, want ErrNotAcquired, not saying no permits are set", wait, err)
		}
	}
	if err := p.Release(bg); err != nil {
		t.Fatal(err)
	}
}
