package latch_test

import (
	"context"
	"testing"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/latch"
)

// TestMaxCount: relock.MaxCount (2^53; TestBadInput has the counts
// beyond it) is a count like any other, counted down exactly.
func TestMaxCount(t *testing.T) {
	bg := context.Background()
	l := latch.New(newClient(t), redistest.Key(t), nil)
	if ok, err := l.TrySetCount(bg, relock.MaxCount); err != nil || !ok {
		t.Fatalf("TrySetCount(MaxCount) = %v, %v", ok, err)
	}
	if n, err := l.Count(bg); err != nil || n != relock.MaxCount {
		t.Fatalf("Count = %d, %v; want MaxCount", n, err)
	}
	if err := l.CountDown(bg); err != nil {
		t.Fatal(err)
	}
	if n, err := l.Count(bg); err != nil || n != relock.MaxCount-1 {
		t.Fatalf("Count = %d, %v; want MaxCount-1", n, err)
	}
}
