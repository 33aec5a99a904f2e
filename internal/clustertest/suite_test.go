package clustertest_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestSuites runs the behaviour suites every lock kind passes on one
// server (locktest.All, and the queue order of the FIFO kinds) on the
// cluster as the limited ACL user: its relock clients use sharded pub/sub,
// its lock names land on every master, and its watchdogs renew across
// masters.
func TestSuites(t *testing.T) {
	c := needCluster(t)
	for _, k := range locktest.All {
		t.Run(k.Name, func(t *testing.T) { locktest.RunCluster(t, c, k) })
		if k.FIFO {
			t.Run(k.Name+"Order", func(t *testing.T) { locktest.RunFairCluster(t, c, k) })
		}
	}
	t.Run("RWReaders", func(t *testing.T) { locktest.RunReadersCluster(t, c) })
}
