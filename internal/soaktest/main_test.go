// Package soaktest_test holds relock's soak test: the shapes of load a
// service keeps up for days (give-ups on hot names, many held leases,
// long holds that re-enter, records whose holders vanish, distinct names
// without end), run for a bounded minute or two on a real redis-server,
// sampling relock's Redis records and the client's heap and failing when
// either grows with the time the load lasts rather than with its rate.
//
// It needs a real redis-server and takes about two minutes, so -short
// leaves it out. Everything listens on 127.0.0.1 only, on ports chosen at
// start.
package soaktest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
)

func TestMain(m *testing.M) {
	// Deadlines of a few milliseconds cut replies on purpose: go-redis's
	// reports of them are expected.
	redis.SetLogger(discard{})
	redistest.Main(m, nil)
}

// quiet is the clients' logger.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// discard is a go-redis logger that prints nothing.
type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
