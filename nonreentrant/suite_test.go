package nonreentrant_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestSuite runs the behaviour suite every lock type shares; its
// reentrancy checks become checks of the refusal for a non-reentrant lock
// (locktest.Kind.Reentry).
func TestSuite(t *testing.T) { locktest.Run(t, srv, locktest.NonReentrant) }
