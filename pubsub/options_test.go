package pubsub_test

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/pubsub"
)

// TestNewOptions: New refuses bad options with an error matching
// relock.ErrInvalidArgument, and takes nil and zero Options as the
// defaults.
func TestNewOptions(t *testing.T) {
	rdb := srv.Client(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}})
	t.Cleanup(func() { cc.Close() })
	for name, tc := range map[string]struct {
		rdb  redis.UniversalClient
		opts *pubsub.Options
		ok   bool
	}{
		"nil options":           {rdb, nil, true},
		"zero options":          {rdb, &pubsub.Options{}, true},
		"sharded on a cluster":  {cc, &pubsub.Options{Mode: pubsub.Sharded}, true},
		"nil client":            {nil, nil, false},
		"typed nil client":      {(*redis.Client)(nil), nil, false},
		"sharded on one server": {rdb, &pubsub.Options{Mode: pubsub.Sharded}, false},
		"unknown mode":          {rdb, &pubsub.Options{Mode: 2}, false},
		"negative mode":         {rdb, &pubsub.Options{Mode: -1}, false},
	} {
		t.Run(name, func(t *testing.T) {
			h, err := pubsub.New(tc.rdb, tc.opts)
			if !tc.ok {
				if h != nil || !errors.Is(err, relock.ErrInvalidArgument) {
					t.Fatalf("New = %v, %v; want nil, ErrInvalidArgument", h, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := h.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestErrClosed: a closed hub's error is relock.ErrClosed itself.
func TestErrClosed(t *testing.T) {
	h, err := pubsub.New(srv.Client(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = h.Subscribe(t.Context(), "closed")
	if !errors.Is(err, relock.ErrClosed) || pubsub.ErrClosed != relock.ErrClosed {
		t.Fatalf("Subscribe after Close = %v; want relock.ErrClosed", err)
	}
}
