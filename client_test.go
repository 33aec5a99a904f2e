package relock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
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
		{"typed nil client", (*redis.Client)(nil), nil},
		{"typed nil cluster client", (*redis.ClusterClient)(nil), nil},
		{"negative watchdog timeout", rdb, &relock.Options{WatchdogTimeout: -time.Second}},
		{"tiny watchdog timeout", rdb, &relock.Options{WatchdogTimeout: time.Millisecond}},
		{"sharded pub/sub without a cluster", rdb, &relock.Options{PubSub: relock.PubSubSharded}},
		{"unknown pub/sub mode", rdb, &relock.Options{PubSub: relock.PubSubMode(42)}},
		{"negative watchdog batch size", rdb, &relock.Options{WatchdogBatchSize: -1}},
	} {
		if rc, err := relock.New(tc.rdb, tc.opts); !errors.Is(err, relock.ErrInvalidArgument) || rc != nil {
			t.Errorf("%s: New = %v, %v; want nil, ErrInvalidArgument", tc.what, rc, err)
		}
	}
}

// FuzzOptions checks relock.New's validation: it never panics, and it
// refuses exactly the options the documentation calls invalid. The
// client is never dialled: New does no I/O for a plain client.
func FuzzOptions(f *testing.F) {
	f.Add(int64(0), 0, 0, int64(0), int64(0))
	f.Add(int64(time.Second), 1, 1, int64(time.Second), int64(-1))
	f.Add(int64(-1), 3, -1, int64(1500*time.Microsecond), int64(time.Hour))
	f.Add(int64(time.Millisecond), 2, 2, int64(time.Minute), int64(1))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	f.Cleanup(func() { rdb.Close() })
	f.Fuzz(func(t *testing.T, watchdog int64, mode, replicas int, syncTimeout, linger int64) {
		o := &relock.Options{
			WatchdogTimeout: time.Duration(watchdog),
			PubSub:          relock.PubSubMode(mode),
			SyncReplicas:    replicas,
			SyncTimeout:     time.Duration(syncTimeout),
			Linger:          time.Duration(linger), // any value: negative turns it off
		}
		st, rt := o.SyncTimeout, rdb.Options().ReadTimeout
		valid := (o.WatchdogTimeout == 0 || o.WatchdogTimeout >= relock.MinWatchdogTimeout) &&
			(o.PubSub == relock.PubSubAuto || o.PubSub == relock.PubSubGlobal) &&
			st >= 0 && st%time.Millisecond == 0 &&
			(replicas < 0 || st == 0 || st < rt) // negative replicas: sync off
		rc, err := relock.New(rdb, o)
		if valid != (err == nil) {
			t.Fatalf("New(%+v) = %v; valid by the documented rules: %v", *o, err, valid)
		}
		if err != nil && !errors.Is(err, relock.ErrInvalidArgument) {
			t.Fatalf("New(%+v) = %v, not ErrInvalidArgument", *o, err)
		}
		if rc != nil {
			rc.Close()
		}
	})
}
