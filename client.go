package relock

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// DefaultWatchdogTimeout is the lease a watchdog keeps renewing, Redisson's
// lockWatchdogTimeout.
const DefaultWatchdogTimeout = 30 * time.Second

// MinWatchdogTimeout is the shortest WatchdogTimeout New accepts.
const MinWatchdogTimeout = 10 * time.Millisecond

// DefaultSyncTimeout is how long an acquire waits for replicas
// (Options.SyncReplicas), Redisson's slavesSyncTimeout.
const DefaultSyncTimeout = time.Second

// Options.SyncReplicas values beside a count of replicas.
const (
	// SyncAuto waits for the replicas the master reports: the default.
	SyncAuto = transport.SyncAuto
	// SyncOff turns replica sync off; any negative value does.
	SyncOff = -1
)

// PubSubMode selects how release messages travel.
type PubSubMode int

const (
	// PubSubAuto uses sharded pub/sub on a Redis Cluster whose servers
	// support it (they answer PUBSUB SHARDNUMSUB), and global pub/sub
	// otherwise, as Redisson does. The client asks the cluster in the
	// background from New on; an operation that starts before the answer
	// waits for it under its own context. When the cluster cannot tell
	// (it is unreachable, or the ACL user may not run PUBSUB
	// SHARDNUMSUB), operations fail with that error rather than guess: a
	// guess that differs from other clients' would leave waiters
	// unwoken. The next operation asks again, unless the server refused.
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

	// LeaseMargin is how long before a lease could run out on the
	// server the holder's context is cancelled with ErrLockLost: the
	// holder's time to notice and stop. Default a tenth of
	// WatchdogTimeout for renewed leases, none for fixed ones; if set,
	// it applies to both and is below WatchdogTimeout/2. Why, and its
	// limits: docs/guarantees.md.
	LeaseMargin time.Duration

	// WatchdogBatchSize is how many renewals the watchdog sends at most
	// in one pipeline (one round trip a Redis node), each batch with a
	// deadline of its own, so that no renewal waits on a batch too large
	// to answer within its interval. Default watchdog.DefaultBatchSize
	// (2000); not negative.
	WatchdogBatchSize int

	// PubSub selects global or sharded pub/sub. Default PubSubAuto.
	// Every client sharing a lock must use the same kind: the two never
	// see each other's messages.
	PubSub PubSubMode

	// Logger receives warnings about failed renewals and reconnects,
	// about forgotten unlocks, and, once for each Redis master, about a
	// master that may evict keys or a note that the client's user may
	// not run INFO to check ("Memory and eviction" in
	// docs/operations.md). Default slog.Default().
	Logger *slog.Logger

	// LeakStacks records the stack of every Lock call whose hold could be
	// reported as a forgotten unlock (a lock context dropped without
	// Unlock: see docs/leaks.md), and adds it to the report. It costs
	// each such Lock a walk of its stack and an allocation: turn it on
	// to find where a reported lock was taken. Default off: reports name
	// the lock and its owner only.
	LeakStacks bool

	// SyncReplicas sets replica sync, which keeps a lock through a
	// failover: a replica promoted after the acquire returned has it.
	//
	// Zero, the default (SyncAuto), makes every acquire wait after its
	// script, on the same connection, until the replicas the master
	// reports as connected have it (WAIT; WAITAOF, which also waits for
	// the master's own fsync, when the master writes an append-only file
	// and runs Redis 7.2 or later), as Redisson does by default. An
	// acquire that none of them confirms within SyncTimeout is undone and
	// reported as an error matching ErrNotAcquired. A master with neither
	// replicas nor an append-only file costs nothing more. The master's
	// report (INFO, one round trip) is read again once a second, and as
	// soon as a WAIT counts another number of replicas than it named, so
	// the client's ACL user needs INFO (and WAITAOF with an append-only
	// file).
	//
	// Positive waits for that many replicas, and fails an acquire that
	// fewer confirm. Negative (SyncOff) turns replica sync off: no
	// waiting, and a failover may lose a lock the old master had not yet
	// replicated.
	SyncReplicas int

	// SyncTimeout bounds the wait for replicas. Default
	// DefaultSyncTimeout, or half the go-redis client's ReadTimeout when
	// that is shorter; it must be a whole number of milliseconds, and
	// below the ReadTimeout.
	SyncTimeout time.Duration

	// Observer, if set, is told what the client's locks do (package
	// observe; the module github.com/relock-go/relock/relockotel makes
	// OpenTelemetry metrics and spans of it). Default none, which costs
	// nothing.
	Observer observe.Observer

	// Linger is how long a lock's release channel stays subscribed
	// after the client's last waiter on it leaves, so that a lock
	// contended again soon costs no SUBSCRIBE, PING or UNSUBSCRIBE and
	// its waiters need no second attempt. At most MaxLingering channels
	// linger; past that the one left longest ago is unsubscribed.
	// Default DefaultLinger; negative unsubscribes a channel as its last
	// waiter leaves.
	Linger time.Duration

	// DisablePipelining sends every acquire and unlock in a round trip
	// of its own. Default off: the calls of goroutines that meet go out
	// together, as one pipeline per Redis master, while a lone call is
	// sent at once; each caller still returns by its own context's
	// deadline. How, and what it saves: docs/performance.md.
	DisablePipelining bool
}

// DefaultLinger is the default Options.Linger.
const DefaultLinger = 10 * time.Second

// MaxLingering bounds the channels a client keeps subscribed without
// waiters (Options.Linger).
const MaxLingering = 1024

// A Client holds what the locks built on it share: a random ID naming its
// owners in Redis, a subscription hub and a lease watchdog. Create one per
// process and Redis deployment with New, share it between goroutines, and
// Close it when done. A Client does not close the go-redis client.
// A nil *Client's methods return an error matching ErrInvalidArgument;
// its ID is "" and its Stats zero.
type Client struct {
	c *core.Client
}

// errNil is the error of every operation of a nil *Client.
var errNil = core.NilReceiver("relock", "Client")

func init() {
	core.SetUnwrap(func(v any) *core.Client {
		if rc, ok := v.(*Client); ok && rc != nil {
			return rc.c
		}
		return nil
	})
}

// New returns a Client over rdb, which may be a *redis.Client, a
// *redis.ClusterClient or a failover client. Unless rdb has retries off
// and context deadlines on, relock sends its acquires and unlocks through
// a copy of rdb of its own with retries off, and unless rdb has context
// deadlines on, its other calls (renewals, give-ups, state queries)
// through one that has them; New then adds hooks to rdb through which
// those commands pass rdb's hooks too, so add yours before New.
// Hooks cannot be removed: make one Client per go-redis client and keep
// it, rather than a Client per task on one go-redis client. New does not
// wait for Redis: its errors are bad options only. With a cluster client
// and PubSubAuto it starts asking the cluster whether it has sharded
// pub/sub, in the background (see PubSubAuto; set Options.PubSub to
// start without asking).
func New(rdb redis.UniversalClient, opts *Options) (*Client, error) {
	if transport.IsNil(rdb) {
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
	if o.LeaseMargin < 0 || o.LeaseMargin >= o.WatchdogTimeout/2 {
		return nil, fmt.Errorf("relock: LeaseMargin %v not in [0, WatchdogTimeout/2 = %v): %w", o.LeaseMargin, o.WatchdogTimeout/2, ErrInvalidArgument)
	}
	if o.WatchdogBatchSize < 0 {
		return nil, fmt.Errorf("relock: negative WatchdogBatchSize %d: %w", o.WatchdogBatchSize, ErrInvalidArgument)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
	syncing, rt := o.SyncReplicas >= 0, readTimeout(rdb)
	switch {
	case o.SyncTimeout < 0:
		return nil, fmt.Errorf("relock: negative SyncTimeout: %w", ErrInvalidArgument)
	case o.SyncTimeout%time.Millisecond != 0:
		return nil, fmt.Errorf("relock: SyncTimeout %v is not whole milliseconds: %w", o.SyncTimeout, ErrInvalidArgument)
	case syncing && rt > 0 && o.SyncTimeout >= rt:
		return nil, fmt.Errorf("relock: SyncTimeout %v not below the client's ReadTimeout %v: %w", o.SyncTimeout, rt, ErrInvalidArgument)
	case o.SyncTimeout == 0:
		o.SyncTimeout = defaultSyncTimeout(rt)
	}
	if _, cluster := rdb.(*redis.ClusterClient); o.PubSub == PubSubSharded && !cluster {
		return nil, fmt.Errorf("relock: PubSubSharded needs a *redis.ClusterClient: %w", ErrInvalidArgument)
	}
	if o.Observer != nil && transport.IsNil(o.Observer) {
		return nil, fmt.Errorf("relock: nil Observer: %w", ErrInvalidArgument)
	}
	if o.PubSub < PubSubAuto || o.PubSub > PubSubSharded {
		return nil, fmt.Errorf("relock: unknown PubSubMode %d: %w", o.PubSub, ErrInvalidArgument)
	}
	c := core.NewClient(rdb, core.Config{
		ID:                newID(),
		WatchdogTimeout:   o.WatchdogTimeout,
		PubSub:            core.PubSubMode(o.PubSub),
		Log:               o.Logger,
		LeakStacks:        o.LeakStacks,
		SyncReplicas:      o.SyncReplicas,
		SyncTimeout:       o.SyncTimeout,
		Observer:          o.Observer,
		Linger:            o.Linger,
		LeaseMargin:       o.LeaseMargin,
		BatchSize:         o.WatchdogBatchSize,
		MaxLingering:      MaxLingering,
		DisablePipelining: o.DisablePipelining,
	})
	return &Client{c: c}, nil
}

// defaultSyncTimeout is DefaultSyncTimeout, or half of a shorter read
// timeout rt (whole milliseconds, at least one), so that a WAIT that runs
// out answers before the connection's deadline.
func defaultSyncTimeout(rt time.Duration) time.Duration {
	if rt <= 0 || rt > DefaultSyncTimeout {
		return DefaultSyncTimeout
	}
	return max(rt/2, time.Millisecond).Truncate(time.Millisecond)
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

// newID returns a client ID: a random UUID in Redisson's textual form,
// with version 8 where Redisson's are version 4. relock's scripts tell
// relock's owner fields from Redisson's by it: they hand a fair lock
// directly to a relock waiter, and wake a Redisson waiter instead.
func newID() string {
	id := uuid.New()
	id[6] = id[6]&0x0f | 0x80
	return id.String()
}

// ID is the client's random UUID (version 8: see newID), the first part
// of every owner field it writes ("<ID>:<owner>").
func (rc *Client) ID() string {
	if rc == nil {
		return ""
	}
	return rc.c.ID
}

// Close is Shutdown bounded by CloseTimeout.
func (rc *Client) Close() error {
	if rc == nil {
		return errNil
	}
	return rc.c.Close()
}

// CloseTimeout bounds how long Close spends releasing held locks.
const CloseTimeout = core.CloseTimeout

// CleanupGrace is how long past its context's end a call may run to
// finish what must not be left half done: an Unlock given a context that
// is done already, a wait leaving a fair lock's queue, the undo of an
// acquire whose reply was lost. What Redis has not confirmed by then goes
// on in the background, for up to OpTimeout, and the lease bounds what
// that cannot do. See "Deadlines, call by call" in docs/guarantees.md.
const CleanupGrace = core.Grace

// OpTimeout bounds each Redis round trip an acquire, a release or a
// change makes for a context without a deadline (unless the go-redis
// client's own timeouts bound each round trip within it), and each piece
// of clean-up relock goes on with in the background. State queries
// (IsLocked, HoldCount, TTL, ...) set no timer: without a deadline the
// go-redis client's timeouts bound them ("Queries" in docs/guarantees.md).
const OpTimeout = transport.OpTimeout

// Shutdown ends the client: waiting Lock calls return ErrClosed at once,
// the contexts of locks still held are cancelled with cause ErrClosed,
// and then those locks are released in Redis, so that another process
// waiting for one gets it now rather than when its lease runs out; ctx
// bounds the releases (a lock not released by then is left to its
// lease; clean-ups still under way in the background are cut off then
// too). Shutdown stops the watchdog and the subscription hub and waits
// for their goroutines; it never waits for a Lock call to give up. It
// returns within CleanupGrace of ctx's end even when Redis hangs: what
// it still waits for then is cut off, by closing relock's own
// connections, and given CleanupGrace to return. A service that handles
// SIGTERM calls it, with the time it can spare, before exiting. Shutdown and Close are idempotent: after the first,
// they return nil at once. Fixed-lease, read/write and MultiLock member
// holds are released too, and a RedLock's record on this client's
// master.
func (rc *Client) Shutdown(ctx context.Context) error {
	if rc == nil {
		return errNil
	}
	return rc.c.Shutdown(ctx)
}

// Stats reports the client's holds (one per owner and lock), the acquires
// waiting on its subscriptions, and the channels it is subscribed to
// with waiters or lingering (not counting its own for force-unlock
// notices, subscribed from its first hold on). It sends nothing to
// Redis.
func (rc *Client) Stats() observe.Stats {
	if rc == nil {
		return observe.Stats{}
	}
	return rc.c.Stats()
}
