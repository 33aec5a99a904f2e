package locktest

import (
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// The kinds of lock the suite runs: each lock package runs its own on one
// server, internal/clustertest all of them on a cluster, and
// internal/securetest all of them as a limited user over TLS.
var (
	Reentrant = Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return reentrant.New(rc, name, &reentrant.Options{Lease: lease})
		},
	}

	Fair = Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return fair.New(rc, name, &fair.Options{Lease: lease})
		},
		Residue: FairResidue,
	}

	// RWWriter is a read/write lock's write side, an exclusive reentrant
	// lock; RunReaders checks the read side with it.
	RWWriter = Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return rwlock.New(rc, name, &rwlock.Options{Lease: lease}).Writer()
		},
		Channel: func(name string) string { return "redisson_rwlock:{" + name + "}" },
	}
)

// FairResidue names a fair lock's queue and timeout set.
func FairResidue(name string) []string {
	return []string{"redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}"}
}
