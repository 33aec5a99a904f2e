// Package reorder_test runs the proxy between go-redis clients and a
// real redis-server, and between raw connections and a scripted server
// that sends every RESP2 and RESP3 type.
//
// Everything listens on 127.0.0.1 only, on ports chosen at start.
package reorder_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestMain checks, after the tests, that no goroutine leaked: every
// proxy's goroutines end with its Close.
func TestMain(m *testing.M) { redistest.Main(m, nil) }
