// Package core holds what the root package and the lock packages share
// without exporting it to users: the client's guts, owners in contexts,
// local hold records, name derivation and the sentinel errors.
package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/relock-go/relock/observe"
	"github.com/relock-go/relock/pubsub"
	"github.com/relock-go/relock/watchdog"
)

// Client is the state behind a *relock.Client.
type Client struct {
	// Redis sends relock's calls other than acquires (give-ups,
	// state queries, renewals): the caller's client, or a copy of it that
	// cuts a call off at its context's deadline (see callClient).
	Redis           redis.UniversalClient
	Scripts         redis.UniversalClient // acquire scripts: see scriptClient
	ID              string
	WatchdogTimeout time.Duration
	Publish         string // PUBLISH, or SPUBLISH in sharded mode
	PublishArg      any    // Publish as a script argument, boxed once
	WatchdogArg     any    // WatchdogTimeout in ms as a script argument, boxed once
	Hub             *pubsub.Hub
	Watchdog        *watchdog.Watchdog
	Log             *slog.Logger
	LeakStacks      bool          // record each tracked Lock call's stack for leak reports (leak.go)
	SyncReplicas    int           // replicas an acquire waits for: SyncAuto, a count, negative: none
	SyncTimeout     time.Duration // how long it waits for them

	syncs syncs // the masters' reports of their replicas (sync.go)

	// Obs is told what the client's locks do (observe.go); nil for
	// nobody. It is set before the client is used.
	Obs observe.Observer

	closeScripts func() error
	closeCalls   func() error // closes Redis when it is a copy
	closeOnce    sync.Once    // closeOwned
	closeErr     error        // closeOwned's
	closed       atomic.Bool
	// ops is read-held by every operation that runs scripts, so that
	// Close closes the script client only once they are done.
	ops sync.RWMutex
	// end is ops.RUnlock, made once: Begin returns it without
	// allocating.
	end func()
	// bounded: the client's own timeouts bound every round trip within
	// OpTimeout (see OpContext).
	bounded bool

	mu    sync.Mutex
	holds map[HoldKey]*hold

	listening atomic.Bool // Listen began (notice.go)

	bgMu   sync.Mutex // guards bgDone and pending, and orders bg.Add before bg.Wait
	bgDone bool       // Shutdown waits for bg: Background runs nothing
	bg     sync.WaitGroup
	// bgEnd ends the background work's contexts (bgContext) when
	// Shutdown's ctx ends before the work does.
	bgEnd    context.Context
	bgCancel context.CancelFunc
	// pending holds the clean-ups under way in the background for each
	// hold key (Detach), which the key's next acquire waits for
	// (AwaitPending); npending counts them, so that an acquire with
	// nothing pending takes no lock.
	pending  map[HoldKey]*pend
	npending atomic.Int64
}

// NewClient assembles a client and starts its watchdog. The hub starts
// its connections on first use. sharded tells whether the client uses
// sharded pub/sub; it may ask Redis through scripts, the client relock
// runs acquires through (no retries, deadlines honoured), and its error
// is NewClient's.
func NewClient(rdb redis.UniversalClient, id string, timeout time.Duration, log *slog.Logger, sharded func(scripts redis.UniversalClient) (bool, error)) (*Client, error) {
	scripts, closeScripts := scriptClient(rdb)
	shard, err := sharded(scripts)
	if err != nil {
		closeScripts()
		return nil, err
	}
	calls, closeCalls := callClient(rdb)
	publish, hubRedis := "PUBLISH", rdb
	if shard {
		// A sharded hub asks its client for the cluster's layout, and
		// reloads it when a master stops answering or a slot moves, before
		// it wakes the waiters; their acquires must then find the new
		// layout, so the hub asks the client they go through.
		publish, hubRedis = "SPUBLISH", scripts
	}
	c := &Client{
		Redis:           calls,
		Scripts:         scripts,
		ID:              id,
		WatchdogTimeout: timeout,
		Publish:         publish,
		Hub:             pubsub.New(hubRedis, shard, log),
		Watchdog:        watchdog.New(calls, timeout, log),
		Log:             log,
		closeScripts:    closeScripts,
		closeCalls:      closeCalls,
		holds:           make(map[HoldKey]*hold),
	}
	c.end, c.PublishArg, c.WatchdogArg = c.ops.RUnlock, c.Publish, Millis(timeout)
	c.bgEnd, c.bgCancel = context.WithCancel(context.Background())
	if r, ok := rdb.(*redis.Client); ok {
		c.bounded = bounded(r.Options())
	}
	return c, nil
}

// bounded reports whether a client of one server (or a failover
// client) with options o bounds each network step of a round trip within
// OpTimeout on its own: the dial, the write and the read (go-redis's
// defaults are 5 s each; the wait for a pooled connection, which only a
// client out of connections makes, is its PoolTimeout, a second more
// than the read's by default). A cluster client's calls may retry, on
// other nodes, until their context ends.
func bounded(o *redis.Options) bool {
	within := func(d time.Duration) bool { return d > 0 && d <= OpTimeout }
	return within(o.DialTimeout) && within(o.ReadTimeout) && within(o.WriteTimeout)
}

var unwrap func(any) *Client

// SetUnwrap is called once, by the root package, to give lock packages
// access to a *relock.Client's state without exporting it.
func SetUnwrap(f func(any) *Client) { unwrap = f }

// Of returns the state of a *relock.Client; nil for a nil client.
func Of(rc any) *Client { return unwrap(rc) }

// Field is the hash field naming owner on this client: "<id>:<owner>".
func (c *Client) Field(owner int64) string {
	return c.ID + ":" + strconv.FormatInt(owner, 10)
}

// Server names the Redis deployment the client talks to, as configured:
// the address of a single server, the sorted seed addresses of a cluster,
// the master name and sentinels of a failover client; for clients it
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

// Begin starts an operation that runs scripts: Close waits for end
// before closing the script client. It fails with ErrClosed after Close.
func (c *Client) Begin() (end func(), err error) {
	c.ops.RLock()
	if c.closed.Load() {
		c.ops.RUnlock()
		return nil, ErrClosed
	}
	return c.end, nil
}

// Check returns ErrClosed after Close.
func (c *Client) Check() error {
	if c.closed.Load() {
		return ErrClosed
	}
	return nil
}

// CloseTimeout bounds the releases Close makes (see Shutdown).
const CloseTimeout = 5 * time.Second

// Close is Shutdown bounded by CloseTimeout.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	return c.Shutdown(ctx)
}

// Shutdown stops the watchdog and the hub and waits for their goroutines,
// then releases the locks the client's owners still hold, and waits for
// the clean-ups under way in the background, until ctx ends.
// Their contexts are cancelled with cause ErrClosed first, so a holder's
// work is told before the lock can go to anyone else. Waits end with
// ErrClosed; no operation starts after Shutdown begins. Shutdown is
// idempotent: a second call returns at once.
func (c *Client) Shutdown(ctx context.Context) error {
	if c.closed.Swap(true) {
		return nil
	}
	c.Watchdog.Stop()
	// Closing the hub ends every wait; operations still running (a
	// waiter leaving a fair queue) finish before the scripts' client goes.
	err := c.Hub.Close()
	c.mu.Lock()
	holds := c.holds
	c.holds = make(map[HoldKey]*hold)
	c.mu.Unlock()
	for _, h := range holds {
		h.end(ErrClosed)
	}
	err = errors.Join(err, c.release(ctx, holds))
	c.waitBackground(ctx)
	c.bgCancel()
	c.ops.Lock()
	err = errors.Join(err, c.closeOwned())
	c.ops.Unlock()
	return err
}

// closeOwned closes relock's own copies of the caller's client, once.
func (c *Client) closeOwned() error {
	c.closeOnce.Do(func() { c.closeErr = errors.Join(c.closeScripts(), c.closeCalls()) })
	return c.closeErr
}

// release releases holds in Redis, several at a time, until ctx ends.
// A hold whose lock type gave no Releaser is left to its lease.
func (c *Client) release(ctx context.Context, holds map[HoldKey]*hold) error {
	var g errgroup.Group
	g.SetLimit(releaseParallel)
	for key, h := range holds {
		if h.releaser == nil {
			continue
		}
		g.Go(func() error {
			if err := h.releaser.Release(ctx, key.Field, h.count); err != nil {
				return fmt.Errorf("relock: releasing %q on close: %w", key.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}

// releaseParallel bounds the releases Shutdown has in flight.
const releaseParallel = 16

// Eval runs script and maps a nil reply to (nil, nil).
//
// On a cluster, a call that could not even connect (the slot's master is
// dead and go-redis has not yet learnt of its replacement, which it
// otherwise does only every minute) reloads the cluster's layout and is
// sent again, with backoff, until ctx ends. A dial error means the script
// never ran, so sending it again cannot apply it twice. Other network
// errors (a timeout: the script may have run) are returned, once the
// layout is reloaded for the next call (awaitLayout).
func Eval(ctx context.Context, rdb redis.Scripter, s *redis.Script, keys []string, args ...any) (any, error) {
	v, err := eval(ctx, rdb, s, keys, args, true)
	if err != nil {
		err = Ended(ctx, nil, err)
	}
	return v, err
}

// EvalWithin is Eval for a caller whose ctx deadline bounds the whole
// call, RedLock's NodeTimeout: after a call that got no answer it has a
// cluster client reload its layout in the background, and does not wait
// for that.
func EvalWithin(ctx context.Context, rdb redis.Scripter, s *redis.Script, keys []string, args ...any) (any, error) {
	return eval(ctx, rdb, s, keys, args, false)
}

func eval(ctx context.Context, rdb redis.Scripter, s *redis.Script, keys []string, args []any, await bool) (any, error) {
	cc, cluster := rdb.(*redis.ClusterClient)
	backoff := 50 * time.Millisecond
	for {
		var master string
		if cluster && len(keys) > 0 {
			if node, err := cc.MasterForKey(ctx, keys[0]); err == nil {
				master = node.Options().Addr
			}
		}
		v, err := s.Run(ctx, rdb, keys, args...).Result()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		if !cluster || err == nil {
			return v, err
		}
		switch {
		case len(keys) == 0 || !Unanswered(err):
		case await:
			// A master that timed out may be failing over: let the next
			// call (an acquire's undo, a retry) find out where its slots
			// went.
			awaitLayout(ctx, cc, keys[0], master)
		default:
			cc.ReloadState(ctx)
		}
		if !IsDialError(err) {
			return v, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// layoutWait bounds awaitLayout.
const layoutWait = time.Second

// awaitLayout has cc reload its cluster layout after a call for key,
// sent to master, failed without an answer, and waits, for layoutWait at
// most, until the layout names another master for key: go-redis reloads
// in the background, and a call sent before that completes would go to
// the silent master again and wait out another read timeout. When no
// failover is under way the layout keeps the master and the wait runs
// out.
func awaitLayout(ctx context.Context, cc *redis.ClusterClient, key, master string) {
	// The call's own deadline may be what ran out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), layoutWait)
	defer cancel()
	cc.ReloadState(ctx)
	if master == "" {
		return
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if node, err := cc.MasterForKey(ctx, key); err == nil && node.Options().Addr != master {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cc.ReloadState(ctx)
	}
}

// Unanswered reports an error of a call that got no answer: a network
// error, or a deadline that ran out. The call may have run.
func Unanswered(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, context.DeadlineExceeded)
}

// IsDialError reports an error from connecting, before anything was
// sent: a call that failed so never ran.
func IsDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// OptionalInt returns cmd's integer reply, with ok false when the reply
// is nil (a missing key or field).
func OptionalInt(cmd *redis.StringCmd) (n int64, ok bool, err error) {
	n, err = cmd.Int64()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return n, err == nil, err
}

// OptionalString returns cmd's string reply, with ok false when the
// reply is nil.
func OptionalString(cmd *redis.StringCmd) (s string, ok bool, err error) {
	s, err = cmd.Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	return s, err == nil, err
}

// Flag is a script's yes-or-no argument, "1" or "0", boxed without
// allocating.
func Flag(b bool) any {
	if b {
		return "1"
	}
	return "0"
}

// Millis renders d for PEXPIRE-style arguments.
func Millis(d time.Duration) int64 { return d.Milliseconds() }
