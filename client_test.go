package relock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
)

// TestNewBadInput: relock.New refuses bad clients and options.
func TestNewBadInput(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	for _, tc := range []struct {
		what string
		rdb  redis.UniversalClient
		opts *relock.Options
	}{
		{"nil client", nil, nil},
		{"negative watchdog timeout", rdb, &relock.Options{WatchdogTimeout: -time.Second}},
		{"tiny watchdog timeout", rdb, &relock.Options{WatchdogTimeout: time.Millisecond}},
		{"sharded pub/sub without a cluster", rdb, &relock.Options{PubSub: relock.PubSubSharded}},
		{"unknown pub/sub mode", rdb, &relock.Options{PubSub: relock.PubSubMode(42)}},
	} {
		if rc, err := relock.New(tc.rdb, tc.opts); !errors.Is(err, relock.ErrInvalidArgument) || rc != nil {
			t.Errorf("%s: New = %v, %v; want nil, ErrInvalidArgument", tc.what, rc, err)
		}
	}
}
