package watchdog_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/watchdog"
)

// TestNewOptions: New refuses bad options with an error matching
// relock.ErrInvalidArgument, and takes nil and zero Options as the
// defaults.
func TestNewOptions(t *testing.T) {
	rdb := srv.Client(t)
	for name, tc := range map[string]struct {
		rdb  redis.UniversalClient
		opts *watchdog.Options
		ok   bool
	}{
		"nil options":        {rdb, nil, true},
		"zero options":       {rdb, &watchdog.Options{}, true},
		"shortest timeout":   {rdb, &watchdog.Options{Timeout: relock.MinWatchdogTimeout}, true},
		"widest margin":      {rdb, &watchdog.Options{Timeout: time.Second, Margin: time.Second/2 - 1}, true},
		"batch of one":       {rdb, &watchdog.Options{BatchSize: 1}, true},
		"nil client":         {nil, nil, false},
		"typed nil client":   {(*redis.Client)(nil), nil, false},
		"negative timeout":   {rdb, &watchdog.Options{Timeout: -time.Second}, false},
		"timeout too short":  {rdb, &watchdog.Options{Timeout: relock.MinWatchdogTimeout - 1}, false},
		"negative margin":    {rdb, &watchdog.Options{Margin: -1}, false},
		"margin of half":     {rdb, &watchdog.Options{Timeout: time.Second, Margin: time.Second / 2}, false},
		"default timeout's":  {rdb, &watchdog.Options{Margin: relock.DefaultWatchdogTimeout / 2}, false},
		"negative batchsize": {rdb, &watchdog.Options{BatchSize: -1}, false},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := watchdog.New(tc.rdb, tc.opts)
			if !tc.ok {
				if w != nil || !errors.Is(err, relock.ErrInvalidArgument) {
					t.Fatalf("New = %v, %v; want nil, ErrInvalidArgument", w, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestErrClosed: a closed watchdog's error is relock.ErrClosed itself.
func TestErrClosed(t *testing.T) {
	w, err := watchdog.New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = w.Watch(watchdog.Renewal{Script: renew, Keys: []string{"closed:" + uuid.NewString()}}, time.Now(), func(error) {})
	if !errors.Is(err, relock.ErrClosed) || watchdog.ErrClosed != relock.ErrClosed {
		t.Fatalf("Watch after Close = %v; want relock.ErrClosed", err)
	}
}
