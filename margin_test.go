package relock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
)

// TestLeaseMarginRange: relock.New takes a LeaseMargin in
// [0, WatchdogTimeout/2) and refuses the rest with ErrInvalidArgument.
// The client is never dialled: New does no I/O for a plain client.
func TestLeaseMarginRange(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	t.Cleanup(func() { rdb.Close() })
	for _, tc := range []struct {
		watchdog, margin time.Duration
		ok               bool
	}{
		{0, 0, true},
		{0, -time.Nanosecond, false},
		{0, time.Second, true},
		{0, relock.DefaultWatchdogTimeout/2 - time.Nanosecond, true},
		{0, relock.DefaultWatchdogTimeout / 2, false},
		{0, relock.DefaultWatchdogTimeout, false},
		{time.Second, 400 * time.Millisecond, true},
		{time.Second, 500 * time.Millisecond, false},
		{relock.MinWatchdogTimeout, time.Millisecond, true},
	} {
		rc, err := relock.New(rdb, &relock.Options{WatchdogTimeout: tc.watchdog, LeaseMargin: tc.margin})
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, relock.ErrInvalidArgument)) {
			t.Errorf("New(WatchdogTimeout %v, LeaseMargin %v) = %v, want ok %v (else ErrInvalidArgument)", tc.watchdog, tc.margin, err, tc.ok)
		}
		if rc != nil {
			rc.Close()
		}
	}
}
