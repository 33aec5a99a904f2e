package rwlock_test

import (
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/rwlock"
)

// TestReaderLate runs locktest's checks of what a call leaves when it
// gives up on the read side (the write side's run in TestWriterSuite):
// a late read acquire leaves no read hold nor its timeout key, the churn
// leaves nothing (readers share, so it checks no exclusion), and the
// explorer's seeds pass.
func TestReaderLate(t *testing.T) {
	locktest.RunLate(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return rwlock.New(rc, name, &rwlock.Options{Lease: lease}).Reader()
		},
		Channel: func(name string) string { return "redisson_rwlock:{" + name + "}" },
		Shared:  true,
	})
}
