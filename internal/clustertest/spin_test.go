package clustertest_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// The behaviour suite on the cluster for the spin lock, whose waiters
// poll and subscribe to nothing, and for the non-reentrant lock, which
// refuses its holder's second Lock.

func TestSpinSuite(t *testing.T) { locktest.RunCluster(t, needCluster(t), locktest.Spin) }

func TestNonReentrantSuite(t *testing.T) {
	locktest.RunCluster(t, needCluster(t), locktest.NonReentrant)
}
