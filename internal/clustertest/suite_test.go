package clustertest_test

import (
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/locktest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// The behaviour suite every lock type passes on one server, run on the
// cluster: its relock clients use sharded pub/sub, its lock names land on
// every master, and its watchdogs renew across masters.

func TestReentrantSuite(t *testing.T) {
	locktest.RunCluster(t, needCluster(t), locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return reentrant.New(rc, name, &reentrant.Options{Lease: lease})
		},
	})
}

func TestFairSuite(t *testing.T) {
	locktest.RunCluster(t, needCluster(t), locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return fair.New(rc, name, &fair.Options{Lease: lease})
		},
		Residue: func(name string) []string {
			return []string{"redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}"}
		},
	})
}

func TestRWLockWriterSuite(t *testing.T) {
	locktest.RunCluster(t, needCluster(t), locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return rwlock.New(rc, name, &rwlock.Options{Lease: lease}).Writer()
		},
		Channel: func(name string) string { return "redisson_rwlock:{" + name + "}" },
	})
}
