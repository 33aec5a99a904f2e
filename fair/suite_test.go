package fair_test

import (
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/locktest"
)

// TestSuite runs the behaviour suite every lock type shares.
func TestSuite(t *testing.T) {
	locktest.Run(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return fair.New(rc, name, &fair.Options{Lease: lease})
		},
		Residue: residue,
	})
}

// residue names the fair lock's queue and timeout set.
func residue(name string) []string {
	return []string{"redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}"}
}
