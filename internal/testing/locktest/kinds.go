package locktest

import (
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/spinlock"
)

// All lists every kind the suite runs: each lock package runs its own on
// one server, and internal/clustertest (on a cluster) and
// internal/securetest (as a limited user over TLS) range over All, so a
// kind added here runs in both.
var All = []Kind{Reentrant, Fair, RWWriter, Spin, NonReentrant, NonReentrantFair}

// The kinds of lock the suite runs.
var (
	Reentrant = Kind{
		Name: "Reentrant",
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return reentrant.New(rc, name, &reentrant.Options{Lease: lease})
		},
		Grants: true,
	}

	Fair = Kind{
		Name: "Fair",
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return fair.New(rc, name, &fair.Options{Lease: lease})
		},
		Residue: FairResidue,
		Grants:  true,
		FIFO:    true,
	}

	// RWWriter is a read/write lock's write side, an exclusive reentrant
	// lock; RunReaders checks the read side with it.
	RWWriter = Kind{
		Name: "RWWriter",
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return rwlock.New(rc, name, &rwlock.Options{Lease: lease}).Writer()
		},
		Channel: func(name string) string { return "redisson_rwlock:{" + name + "}" },
	}

	// Spin is the spin lock with its default backoff, whose sleeps reach
	// 128ms at most.
	Spin = Kind{
		Name: "Spin",
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return spinlock.New(rc, name, &spinlock.Options{Lease: lease})
		},
		Poll: 128 * time.Millisecond,
	}

	NonReentrant = Kind{
		Name: "NonReentrant",
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return nonreentrant.New(rc, name, &nonreentrant.Options{Lease: lease})
		},
		Reentry: relock.ErrNotReentrant,
		Grants:  true,
	}

	NonReentrantFair = Kind{
		Name: "NonReentrantFair",
		New: func(rc *relock.Client, name string, lease time.Duration) Lock {
			return nonreentrant.NewFair(rc, name, &nonreentrant.FairOptions{Lease: lease})
		},
		Residue: FairResidue,
		Reentry: relock.ErrNotReentrant,
		Grants:  true,
		FIFO:    true,
	}
)

// FairResidue names a fair lock's queue and timeout set.
func FairResidue(name string) []string {
	return []string{"redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}"}
}
