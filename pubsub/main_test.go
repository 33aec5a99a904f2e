package pubsub_test

import (
	"os"
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server the examples run against.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// TestServer: the examples' server answers, and is a redis-server under
// RELOCK_REQUIRE_REDIS=1. Its srv.Real and srv.Client record the server
// lookup for go test's cache (redistest.Record), which the examples,
// reading srv.Addr alone, do not: without it a run on miniredis would be
// reused once redis-server is on PATH.
func TestServer(t *testing.T) {
	if os.Getenv(redistest.RequireEnv) == "1" && !srv.Real() {
		t.Fatalf("%s=1 but the server is miniredis", redistest.RequireEnv)
	}
	t.Logf("server: real %v", srv.Real())
	if err := srv.Client(t).Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
}
