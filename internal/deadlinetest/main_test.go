// Package deadlinetest_test holds relock's context contract against
// servers that fail: every blocking call of every primitive returns by
// its context's deadline (give or take a small slack) whether nothing
// listens (a refused port), a server accepts connections and never
// answers (a black hole), or the server is frozen (SIGSTOP), and nothing
// stays held past its lease afterwards.
//
// Everything listens on 127.0.0.1 only, on ports chosen at start.
package deadlinetest_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
)

func TestMain(m *testing.M) {
	// Every test here fails its servers on purpose: go-redis's reports
	// of refused dials, and relock's of failed renewals, are expected.
	redis.SetLogger(discard{})
	redistest.Main(m, nil)
}

// quiet is the clients' logger.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// discard is a go-redis logger that prints nothing.
type discard struct{}

func (discard) Printf(context.Context, string, ...any) {}
