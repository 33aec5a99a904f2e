package nonreentrant_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestSuite runs the behaviour suite every lock type shares; its
// reentrancy checks become checks of the refusal for a non-reentrant lock
// (locktest.Kind.Reentry).
func TestSuite(t *testing.T) { locktest.Run(t, srv, locktest.NonReentrant) }

// TestFairSuite runs the shared suite for the fair variant, whose
// refusals and queue residue it checks too (locktest.NonReentrantFair).
func TestFairSuite(t *testing.T) {
	redistest.SkipShort(t, "the fair lock's suite runs the shared code; this is the non-reentrant mode's run of it")
	locktest.Run(t, srv, locktest.NonReentrantFair)
}

// TestFairOrderSuite runs the fair lock's own suite, waiters served in
// their queue's order, for the fair variant.
func TestFairOrderSuite(t *testing.T) { locktest.RunFairKind(t, srv, locktest.NonReentrantFair) }
