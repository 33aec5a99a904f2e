package rwlock_test

import (
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/locktest"
	"github.com/relock-go/relock/rwlock"
)

// TestWriterSuite runs the behaviour suite every lock type shares on the
// write side, an exclusive reentrant lock.
func TestWriterSuite(t *testing.T) {
	locktest.Run(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return rwlock.New(rc, name, &rwlock.Options{Lease: lease}).Writer()
		},
		Channel: func(name string) string { return "redisson_rwlock:{" + name + "}" },
	})
}
