package pubsub_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server the examples run against.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }
