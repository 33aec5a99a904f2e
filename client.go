package relock

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
)

// DefaultWatchdogTimeout is the lease a watchdog keeps renewing, Redisson's
// lockWatchdogTimeout.
const DefaultWatchdogTimeout = 30 * time.Second

// MinWatchdogTimeout is the shortest WatchdogTimeout New accepts.
const MinWatchdogTimeout = 10 * time.Millisecond

// DefaultSyncTimeout is how long an acquire waits for replicas when
// Options.SyncReplicas is set, Redisson's slavesSyncTimeout.
const DefaultSyncTimeout = time.Second

// PubSubMode selects how release messages travel.
type PubSubMode int

const (
	// PubSubAuto uses sharded pub/sub on a Redis Cluster whose servers
	// support it (they answer PUBSUB SHARDNUMSUB), and global pub/sub
	// otherwise, as Redisson does.
	PubSubAuto PubSubMode = iota
	// PubSubGlobal uses PUBLISH and SUBSCRIBE.
	PubSubGlobal
	// PubSubSharded uses SPUBLISH and SSUBSCRIBE; it needs a
	// *redis.ClusterClient.
	PubSubSharded
)

// Options configure a Client. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// WatchdogTimeout is the lease of locks taken without a fixed lease.
	// The watchdog renews it every WatchdogTimeout/3 while the lock is
	// held. Default DefaultWatchdogTimeout; at least MinWatchdogTimeout.
	WatchdogTimeout time.Duration

	// PubSub selects global or sharded pub/sub. Default PubSubAuto.
	// Every client sharing a lock must use the same kind: the two never
	// see each other's messages.
	PubSub PubSubMode

	// Logger receives warnings about failed renewals and reconnects.
	// Default slog.Default().
	Logger *slog.Logger

	// SyncReplicas, when positive, makes every acquire wait until that
	// many replicas of the master have it (WAIT, sent on the same
	// connection right after the acquire script), so that a failover to
	// one of them keeps the lock. An acquire that fewer replicas confirm
	// within SyncTimeout is undone and reported as an error matching
	// ErrNotAcquired. Default 0: no waiting, and a failover may lose a
	// lock the old master had not yet replicated.
	SyncReplicas int

	// SyncTimeout bounds the wait for replicas. Default
	// DefaultSyncTimeout; it must be a whole number of milliseconds.
	SyncTimeout time.Duration
}

// A Client holds what the locks built on it share: a random ID naming its
// owners in Redis, a subscription hub and a lease watchdog. Create one per
// process and Redis deployment with New, share it between goroutines, and
// Close it when done. A Client does not close the go-redis client.
type Client struct {
	c *core.Client
}

func init() {
	core.SetUnwrap(func(v any) *core.Client {
		if rc, ok := v.(*Client); ok && rc != nil {
			return rc.c
		}
		return nil
	})
}

// New returns a Client over rdb, which may be a *redis.Client, a
// *redis.ClusterClient or a failover client. It talks to Redis only to
// probe sharded pub/sub support when opts.PubSub is PubSubAuto and rdb is
// a cluster client.
func New(rdb redis.UniversalClient, opts *Options) (*Client, error) {
	if rdb == nil {
		return nil, fmt.Errorf("relock: nil redis client: %w", ErrInvalidArgument)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	switch {
	case o.WatchdogTimeout == 0:
		o.WatchdogTimeout = DefaultWatchdogTimeout
	case o.WatchdogTimeout < MinWatchdogTimeout:
		return nil, fmt.Errorf("relock: WatchdogTimeout %v below %v: %w", o.WatchdogTimeout, MinWatchdogTimeout, ErrInvalidArgument)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.SyncReplicas < 0 || o.SyncTimeout < 0:
		return nil, fmt.Errorf("relock: negative SyncReplicas or SyncTimeout: %w", ErrInvalidArgument)
	case o.SyncTimeout == 0:
		o.SyncTimeout = DefaultSyncTimeout
	case o.SyncTimeout%time.Millisecond != 0:
		return nil, fmt.Errorf("relock: SyncTimeout %v is not whole milliseconds: %w", o.SyncTimeout, ErrInvalidArgument)
	}
	if rt := readTimeout(rdb); o.SyncReplicas > 0 && rt > 0 && o.SyncTimeout >= rt {
		return nil, fmt.Errorf("relock: SyncTimeout %v not below the client's ReadTimeout %v: %w", o.SyncTimeout, rt, ErrInvalidArgument)
	}
	sharded, err := shardedPubSub(rdb, o.PubSub)
	if err != nil {
		return nil, err
	}
	c := core.NewClient(rdb, uuid.NewString(), o.WatchdogTimeout, sharded, o.Logger)
	c.SyncReplicas, c.SyncTimeout = o.SyncReplicas, o.SyncTimeout
	return &Client{c: c}, nil
}

// readTimeout is rdb's read timeout where it can be read, else 0.
func readTimeout(rdb redis.UniversalClient) time.Duration {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ReadTimeout
	case *redis.ClusterClient:
		return c.Options().ReadTimeout
	}
	return 0
}

func shardedPubSub(rdb redis.UniversalClient, mode PubSubMode) (bool, error) {
	cc, cluster := rdb.(*redis.ClusterClient)
	switch mode {
	case PubSubGlobal:
		return false, nil
	case PubSubSharded:
		if !cluster {
			return false, fmt.Errorf("relock: PubSubSharded needs a *redis.ClusterClient: %w", ErrInvalidArgument)
		}
		return true, nil
	case PubSubAuto:
		if !cluster {
			return false, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), core.OpTimeout)
		defer cancel()
		return cc.PubSubShardNumSub(ctx).Err() == nil, nil
	default:
		return false, fmt.Errorf("relock: unknown PubSubMode %d: %w", mode, ErrInvalidArgument)
	}
}

// ID is the client's random UUID, the first part of every owner field it
// writes ("<ID>:<owner>").
func (rc *Client) ID() string { return rc.c.ID }

// Close stops the watchdog and the subscription hub and waits for their
// goroutines. Locks still held are not released: their leases run out,
// and their contexts are cancelled with cause ErrClosed. Waiting Lock
// calls return ErrClosed. Close is idempotent.
func (rc *Client) Close() error { return rc.c.Close() }
