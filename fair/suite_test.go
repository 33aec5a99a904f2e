package fair_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestSuite runs the behaviour suite every lock type shares.
func TestSuite(t *testing.T) { locktest.Run(t, srv, locktest.Fair) }

// TestOrderSuite runs the fair lock's own suite: waiters served in their
// queue's order.
func TestOrderSuite(t *testing.T) { locktest.RunFair(t, srv) }
