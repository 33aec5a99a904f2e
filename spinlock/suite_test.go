package spinlock_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestSuite runs the behaviour suite every lock type shares; its wake-up
// checks become polling checks for a spin lock (locktest.Kind.Poll).
func TestSuite(t *testing.T) { locktest.Run(t, srv, locktest.Spin) }
