package core

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// Config is what a Client is made of: the root package's Options with
// their defaults applied, validated, and the client's ID.
type Config struct {
	ID              string
	WatchdogTimeout time.Duration
	PubSub          PubSubMode
	Log             *slog.Logger
	// LeakStacks records each tracked Lock call's stack for leak
	// reports (leak.go).
	LeakStacks bool
	// SyncReplicas and SyncTimeout are transport.Config's.
	SyncReplicas int
	SyncTimeout  time.Duration
	// Observer is told what the client's locks do (observe.go); nil for
	// nobody.
	Observer observe.Observer
	// Linger and MaxLingering keep channels subscribed after their last
	// waiter leaves (hub.Hub.SetLinger).
	Linger       time.Duration
	MaxLingering int
	// LeaseMargin is relock.Options.LeaseMargin, validated; 0 for the
	// watchdog's default. A lock renewed with a lease of its own
	// (renew.Renewal.Timeout) gets the same fraction of that lease.
	LeaseMargin time.Duration
	// BatchSize is relock.Options.WatchdogBatchSize, validated; 0 for
	// the watchdog's default.
	BatchSize int
	// DisablePipelining sends each acquire and unlock on its own
	// (transport.Pipe).
	DisablePipelining bool
}

// Client is the state behind a *relock.Client. NewClient sets every
// field; none changes after it returns. The exported fields are read
// without a lock; the parts with state of their own guard it themselves,
// in the order the package doc's "Lock order" gives.
type Client struct {
	ID string
	// T sends the client's scripts: acquires with their replica wait,
	// the publish command, and the clients below.
	T *transport.Transport
	// Redis, Scripts and Pipe are T's, for the lock packages' calls.
	Redis           redis.UniversalClient
	Scripts         redis.UniversalClient
	Pipe            redis.Scripter
	WatchdogTimeout time.Duration
	WatchdogArg     any // WatchdogTimeout in ms as a script argument, boxed once (transport's package doc)

	cfg      Config
	watchdog *renew.Watchdog
	// bounded: the client's own timeouts bound every round trip within
	// OpTimeout (see OpContext).
	bounded bool

	life    lifecycle  // closed, operations under way (life.go)
	bg      background // goroutines the client owns (background.go)
	holds   holdTable  // the owners' holds (hold.go)
	pubsub  pubsubMode // the hub and the pub/sub mode (pubsub.go)
	notices notices    // listening for force-unlock notices (notice.go)

	// attempts numbers acquire attempts (nextAttempt).
	attempts atomic.Int64
}

// NewClient assembles a client over rdb and starts its watchdog. The hub
// starts its connections on first use. It sends nothing to Redis itself:
// when cfg leaves the pub/sub mode to a cluster to tell (PubSubAuto), it
// asks in the background, and operations wait for the answer (Check).
func NewClient(rdb redis.UniversalClient, cfg Config) *Client {
	c := &Client{
		ID:              cfg.ID,
		WatchdogTimeout: cfg.WatchdogTimeout,
		WatchdogArg:     transport.Millis(cfg.WatchdogTimeout),
		cfg:             cfg,
		holds:           holdTable{m: make(map[HoldKey]*hold)},
	}
	c.bg.init()
	c.T = transport.New(rdb, transport.Config{
		SyncReplicas:      cfg.SyncReplicas,
		SyncTimeout:       cfg.SyncTimeout,
		DisablePipelining: cfg.DisablePipelining,
		NotAcquired:       ErrNotAcquired,
		Log:               cfg.Log,
		Observer:          cfg.Observer,
		Owner:             c,
		End:               c.bg.end,
	})
	c.Redis, c.Scripts, c.Pipe = c.T.Redis, c.T.Scripts, c.T.Pipe
	c.watchdog = renew.New(c.Redis, cfg.WatchdogTimeout, cfg.Log)
	c.life.init(c.T.Close)
	if r, ok := rdb.(*redis.Client); ok {
		c.bounded = bounded(r.Options())
	}
	if cfg.LeaseMargin > 0 {
		_ = c.watchdog.SetMargin(cfg.LeaseMargin) // in range: see Config
	}
	if cfg.BatchSize > 0 {
		_ = c.watchdog.SetBatchSize(cfg.BatchSize) // in range: see Config
	}
	if cfg.Observer != nil {
		c.watchdog.OnRound(c.watchdogRound)
	}
	c.pubsub.init(c, rdb)
	return c
}

// bounded reports whether a client of one server (or a failover
// client) with options o bounds each network step of a round trip within
// OpTimeout on its own: the dial, the write and the read (go-redis's
// defaults are 5 s each; the wait for a pooled connection, which only a
// client out of connections makes, is its PoolTimeout, a second more
// than the read's by default). A cluster client's calls may retry, on
// other nodes, until their context ends.
func bounded(o *redis.Options) bool {
	within := func(d time.Duration) bool { return d > 0 && d <= transport.OpTimeout }
	return within(o.DialTimeout) && within(o.ReadTimeout) && within(o.WriteTimeout)
}

var unwrap func(any) *Client

// SetUnwrap is called once, by the root package's init, to give lock
// packages access to a *relock.Client's state without exporting it.
func SetUnwrap(f func(any) *Client) { unwrap = f }

// Of returns the state of a *relock.Client; nil for a nil client.
func Of(rc any) *Client { return unwrap(rc) }

// Field is the hash field naming owner on this client: "<id>:<owner>".
func (c *Client) Field(owner int64) string {
	return c.ID + ":" + strconv.FormatInt(owner, 10)
}

// Server names the Redis deployment the client talks to, as configured:
// the address of a single server, the sorted seed addresses of a cluster;
// for a failover (Sentinel) client, go-redis's placeholder address,
// "FailoverClient", the same for every such client; for clients it
// cannot read, the client's ID. Two processes configured alike agree on
// it, so it can order locks canonically across processes.
func (c *Client) Server() string {
	switch r := c.Redis.(type) {
	case *redis.Client:
		return r.Options().Addr
	case *redis.ClusterClient:
		addrs := slices.Clone(r.Options().Addrs)
		slices.Sort(addrs)
		return strings.Join(addrs, ",")
	}
	return c.ID
}
