package clustertest_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// The behaviour suites every lock type passes on one server, run on the
// cluster as the limited ACL user: its relock clients use sharded pub/sub,
// its lock names land on every master, and its watchdogs renew across
// masters.

func TestReentrantSuite(t *testing.T) { locktest.RunCluster(t, needCluster(t), locktest.Reentrant) }

func TestFairSuite(t *testing.T) { locktest.RunCluster(t, needCluster(t), locktest.Fair) }

func TestFairOrderSuite(t *testing.T) { locktest.RunFairCluster(t, needCluster(t)) }

func TestRWLockWriterSuite(t *testing.T) {
	locktest.RunCluster(t, needCluster(t), locktest.RWWriter)
}

func TestRWLockReaderSuite(t *testing.T) { locktest.RunReadersCluster(t, needCluster(t)) }
