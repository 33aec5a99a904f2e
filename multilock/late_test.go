package multilock_test

import (
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
)

// TestLate runs locktest's checks of what a call leaves when it gives up
// on a MultiLock of two reentrant members named after its name, on one
// server: its members' late attempts, its churn and the reordering
// explorer. Every key they look at contains the name.
func TestLate(t *testing.T) {
	locktest.RunLate(t, servers[0], locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			o := &reentrant.Options{Lease: lease}
			return locktest.Basic(multilock.New(reentrant.New(rc, name+":a", o), reentrant.New(rc, name+":b", o)))
		},
		Residue: func(name string) []string {
			return []string{name + ":a", name + ":b", "relock_lock_waiters:{" + name + ":a}", "relock_lock_waiters:{" + name + ":b}"}
		},
		NoForce: true,
	})
}
