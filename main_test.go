package relock_test

import (
	"os"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestMain lets the tests that wait out leases overlap under -short
// (redistest.RaiseParallel); each starts the servers it uses.
func TestMain(m *testing.M) {
	redistest.RaiseParallel()
	os.Exit(m.Run())
}
