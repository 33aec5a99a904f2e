package permits_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// TestMaxCount: relock.MaxCount (2^53; TestBadInput has the counts
// beyond it) is a count like any other, and releases and reclaimed
// permits that take the count past it keep it exact, in Redis, in what
// is published and in AvailablePermits: a Lua number would round
// 2^53+1 and 2^53+3.
func TestMaxCount(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	rc := newClient(t, nil)
	sub := subscribe(t, raw, channelOf(name))
	s := newSemaphore(t, rc, name, relock.MaxCount, nil)
	if got := nextMessage(t, sub); got != strconv.Itoa(relock.MaxCount) {
		t.Fatalf("TrySetPermits(MaxCount) published %q", got)
	}
	if n := availableT(t, s); n != relock.MaxCount {
		t.Fatalf("AvailablePermits = %d, want MaxCount", n)
	}

	p := acquireT(t, s)
	if err := s.AddPermits(bg, 1); err != nil {
		t.Fatal(err)
	}
	if got := nextMessage(t, sub); got != "1" {
		t.Fatalf("AddPermits(1) published %q, want the delta", got)
	}
	releaseT(t, p)
	if got, want := nextMessage(t, sub), "9007199254740993"; got != want {
		t.Fatalf("Release at MaxCount published %q, want %q", got, want)
	}
	if n := availableT(t, s); n != relock.MaxCount+1 {
		t.Fatalf("AvailablePermits = %d, want MaxCount+1", n)
	}

	// A permit that expires comes back through the reclaim every script
	// runs first.
	short := permits.New(rc, name, &permits.Options{Lease: 50 * time.Millisecond})
	p = acquireT(t, short)
	if err := s.AddPermits(bg, 2); err != nil {
		t.Fatal(err)
	}
	if got := nextMessage(t, sub); got != "2" {
		t.Fatalf("AddPermits(2) published %q, want the delta", got)
	}
	<-p.Context().Done()
	redistest.Eventually(t, 2*time.Second, "the permit reclaimed", func() bool {
		return availableT(t, s) == relock.MaxCount+3
	})
	if got, want := nextMessage(t, sub), "9007199254740995"; got != want {
		t.Fatalf("the reclaim at MaxCount+2 published %q, want %q", got, want)
	}
	checkCount(t, raw, name, "9007199254740995")
}
