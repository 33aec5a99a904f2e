package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/reentrant"
)

// A kind is one lock implementation in one configuration: a row of every
// table.
type kind struct {
	ID     string // row label
	Lib    string // relock, redsync, redislock, rueidislock
	Config string // what is set, in the library's own terms
	Relock bool
	Fair   bool // grants in arrival order by design

	// inner names the commands the implementation's Lua scripts run and
	// its client never sends itself: INFO commandstats counts them too,
	// and they are subtracted to count what clients sent.
	inner map[string]bool
	open  func(addr string, o openOpts) (locker, error)
}

// openOpts are the settings a scenario passes to every kind.
type openOpts struct {
	probe *probe
	// lease, if set, is the lease kept alive while a lock is held: relock's
	// WatchdogTimeout, rueidislock's KeyValidity, redsync's expiry,
	// redislock's TTL. renew is how often it is renewed.
	lease, renew time.Duration
	// syncOff turns relock's replica sync off (Options.SyncReplicas
	// SyncOff) where its default waits for the master's replicas; the
	// peers have no replica sync and ignore it.
	syncOff bool
	// permits is what relock's semaphore kind gives each name it uses
	// (scenario s); the locks ignore it.
	permits int
	// noPipelining sends each of relock's calls alone
	// (Options.DisablePipelining); the peers ignore it.
	noPipelining bool
}

// A locker is one client of a kind: one "process" with its own
// connections. It is safe for concurrent use.
type locker interface {
	// owner returns a context for one worker: relock's owner identity
	// travels in the context; the peers ignore it.
	owner(ctx context.Context) context.Context
	// lock waits until it holds name or ctx ends.
	lock(ctx context.Context, name string) (*held, error)
	close()
}

// held is one acquired lock.
type held struct {
	unlock func() error
	// extend renews the lease once; nil when the library renews by
	// itself.
	extend func(ctx context.Context) error
}

// Default leases when a scenario sets none.
const (
	redislockTTL = 30 * time.Second // redislock has no default; relock's and Redisson's lease
	tunedPoll    = 5 * time.Millisecond
)

var quiet = slog.New(slog.DiscardHandler)

// relockInner is kind.inner for relock: the commands its lock scripts
// run, and more, those of the scripts of another of its types.
func relockInner(more ...string) map[string]bool {
	return set(append([]string{"del", "exists", "hdel", "hexists", "hget", "hincrby", "hkeys", "hlen", "hset",
		"incr", "lindex", "lpop", "lpos", "lrange", "lrem", "pexpire", "pttl", "rpush", "set", "time",
		"zadd", "zincrby", "zrange", "zrangebyscore", "zrem", "zremrangebyscore", "zscore", "publish", "spublish"}, more...)...)
}

func kinds() []kind {
	redsyncInner := set("get", "del", "pexpire")
	redislockInner := set("msetnx", "getrange", "mset", "pexpire", "mget", "del", "pttl")
	rueidisInner := set("set", "get", "pexpireat", "del")
	return []kind{
		{ID: "relock reentrant", Lib: "relock", Config: "defaults (waiters registered, the next one handed the lock, watchdog); its go-redis client has " + relockClientOpts + ", as relock would otherwise copy it", Relock: true,
			inner: relockInner(), open: openRelock(reentrantLock)},
		{ID: "relock fair", Lib: "relock", Config: "defaults (FIFO queue, the head handed the lock); go-redis client as above", Relock: true, Fair: true,
			inner: relockInner(), open: openRelock(fairLock)},
		{ID: "redsync default", Lib: "redsync", Config: "defaults: 32 tries, retry delay rand(50,250ms), expiry 8s; go-redis defaults",
			inner: redsyncInner, open: openRedsync(false)},
		{ID: "redsync tuned", Lib: "redsync", Config: fmt.Sprintf("WithRetryDelay(%v), unlimited tries; go-redis client as relock's (%s)", tunedPoll, relockClientOpts),
			inner: redsyncInner, open: openRedsync(true)},
		{ID: "redislock default", Lib: "redislock", Config: "LinearBackoff(100ms) (its docs' retry; the bare default never retries), TTL 30s; go-redis defaults",
			inner: redislockInner, open: openRedislock(100*time.Millisecond, false)},
		{ID: "redislock tuned", Lib: "redislock", Config: fmt.Sprintf("LinearBackoff(%v), TTL 30s; go-redis client as relock's (%s)", tunedPoll, relockClientOpts),
			inner: redislockInner, open: openRedislock(tunedPoll, true)},
		{ID: "rueidislock default", Lib: "rueidislock", Config: "defaults: KeyMajority 2 (3 keys), KeyValidity 5s, client-side-caching wake-ups",
			inner: rueidisInner, open: openRueidislock(false)},
		{ID: "rueidislock tuned", Lib: "rueidislock", Config: "KeyMajority 1, NoLoopTracking (its README's advice for one Redis)",
			inner: rueidisInner, open: openRueidislock(true)},
	}
}

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// relockClientOpts are the go-redis options relock runs its calls with:
// no retries (a script whose reply was lost must not run twice) and
// socket deadlines from the call's context. Given a client set up
// otherwise, relock makes a copy of its own, which the probe would not
// see, so relock's kinds get a client set up so; the tuned peers on
// go-redis and the Redisson RLock reference get the same, so that no row
// of theirs differs from relock's by the client's options, and the
// default peers keep go-redis's defaults.
const relockClientOpts = "MaxRetries -1, ContextTimeoutEnabled"

// newGoRedis returns a go-redis client of addr fed to o's probe, with
// go-redis's default options, or relock's (relockClientOpts) when
// likeRelock.
func newGoRedis(addr string, o openOpts, likeRelock bool) *redis.Client {
	opt := &redis.Options{Addr: addr}
	if likeRelock {
		opt.MaxRetries, opt.ContextTimeoutEnabled = -1, true
	}
	rdb := redis.NewClient(opt)
	if o.probe != nil {
		rdb.AddHook(goredisHook{o.probe})
	}
	return rdb
}

// relockLocker is one relock.Client with its own go-redis client, and the
// mutex of each name it has used.
type relockLocker struct {
	rdb      *redis.Client
	rc       *relock.Client
	o        openOpts
	newMutex mutexMaker
	mu       sync.Mutex
	mutexes  map[string]relockMutex
}

// A relockMutex is what a relock kind takes on a name: a lock, or one
// permit of a semaphore.
type relockMutex interface {
	Lock(ctx context.Context) (context.Context, error)
	Unlock(ctx context.Context) error
}

// A mutexMaker makes the relockMutex of name on rc, the first time a
// relockLocker uses name, for a scenario that passed o.
type mutexMaker func(ctx context.Context, rc *relock.Client, name string, o openOpts) (relockMutex, error)

func reentrantLock(_ context.Context, rc *relock.Client, name string, _ openOpts) (relockMutex, error) {
	return reentrant.New(rc, name, nil), nil
}

func fairLock(_ context.Context, rc *relock.Client, name string, _ openOpts) (relockMutex, error) {
	return fair.New(rc, name, nil), nil
}

// newRelock returns a relock.Client with its own go-redis client, set up
// as o says.
func newRelock(addr string, o openOpts) (*redis.Client, *relock.Client, error) {
	rdb := newGoRedis(addr, o, true)
	opts := &relock.Options{WatchdogTimeout: o.lease, Logger: quiet, DisablePipelining: o.noPipelining}
	if o.syncOff {
		opts.SyncReplicas = relock.SyncOff
	}
	rc, err := relock.New(rdb, opts)
	if err != nil {
		rdb.Close()
		return nil, nil, err
	}
	return rdb, rc, nil
}

// pipeliningOffID is relock's reentrant lock with each call sent alone,
// a row of scenario p only: what the pipelining brings.
const pipeliningOffID = "relock reentrant, pipelining off"

func pipeliningOffKind() kind {
	return kind{ID: pipeliningOffID, Lib: "relock", Config: "Options.DisablePipelining; otherwise as relock reentrant", Relock: true,
		inner: relockInner(), open: func(addr string, o openOpts) (locker, error) {
			o.noPipelining = true
			return openRelock(reentrantLock)(addr, o)
		}}
}

func openRelock(newMutex mutexMaker) func(string, openOpts) (locker, error) {
	return func(addr string, o openOpts) (locker, error) {
		rdb, rc, err := newRelock(addr, o)
		if err != nil {
			return nil, err
		}
		return &relockLocker{rdb: rdb, rc: rc, o: o, newMutex: newMutex, mutexes: map[string]relockMutex{}}, nil
	}
}

func (l *relockLocker) owner(ctx context.Context) context.Context { return relock.WithNewOwner(ctx) }

func (l *relockLocker) mutex(ctx context.Context, name string) (relockMutex, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	mu := l.mutexes[name]
	if mu == nil {
		var err error
		if mu, err = l.newMutex(ctx, l.rc, name, l.o); err != nil {
			return nil, err
		}
		l.mutexes[name] = mu
	}
	return mu, nil
}

func (l *relockLocker) lock(ctx context.Context, name string) (*held, error) {
	mu, err := l.mutex(ctx, name)
	if err != nil {
		return nil, err
	}
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return nil, err
	}
	return &held{unlock: func() error { return mu.Unlock(lctx) }}, nil
}

func (l *relockLocker) close() {
	l.rc.Close()
	l.rdb.Close()
}

// redsyncLocker is one redsync instance over its own go-redis client. A
// redsync Mutex keeps the value of its current hold, so every acquire
// uses a fresh one.
type redsyncLocker struct {
	rdb  *redis.Client
	rs   *redsync.Redsync
	opts []redsync.Option
}

func openRedsync(tuned bool) func(string, openOpts) (locker, error) {
	return func(addr string, o openOpts) (locker, error) {
		rdb := newGoRedis(addr, o, tuned)
		l := &redsyncLocker{rdb: rdb, rs: redsync.New(goredis.NewPool(rdb))}
		if tuned {
			l.opts = append(l.opts, redsync.WithRetryDelay(tunedPoll), redsync.WithTries(math.MaxInt32))
		}
		if o.lease > 0 {
			l.opts = append(l.opts, redsync.WithExpiry(o.lease))
		}
		return l, nil
	}
}

func (l *redsyncLocker) owner(ctx context.Context) context.Context { return ctx }

func (l *redsyncLocker) lock(ctx context.Context, name string) (*held, error) {
	for {
		m := l.rs.NewMutex(name, l.opts...)
		err := m.LockContext(ctx)
		if err == nil {
			return &held{
				unlock: func() error {
					ok, err := m.UnlockContext(context.Background())
					if err == nil && !ok {
						err = errors.New("redsync: unlock: not held")
					}
					return err
				},
				extend: func(ctx context.Context) error {
					ok, err := m.ExtendContext(ctx)
					if err == nil && !ok {
						err = errors.New("redsync: extend failed")
					}
					return err
				},
			}, nil
		}
		// LockContext gives up after its tries; a waiting caller calls
		// it again.
		if ctx.Err() != nil {
			return nil, err
		}
	}
}

func (l *redsyncLocker) close() { l.rdb.Close() }

// redislockLocker is one redislock.Client over its own go-redis client.
type redislockLocker struct {
	rdb   *redis.Client
	c     *redislock.Client
	ttl   time.Duration
	retry redislock.RetryStrategy
}

// openRedislock opens redislock clients that retry every poll, on a
// go-redis client with relock's options when tuned.
func openRedislock(poll time.Duration, tuned bool) func(string, openOpts) (locker, error) {
	return func(addr string, o openOpts) (locker, error) {
		rdb := newGoRedis(addr, o, tuned)
		ttl := redislockTTL
		if o.lease > 0 {
			ttl = o.lease
		}
		return &redislockLocker{rdb: rdb, c: redislock.New(rdb), ttl: ttl, retry: redislock.LinearBackoff(poll)}, nil
	}
}

func (l *redislockLocker) owner(ctx context.Context) context.Context { return ctx }

func (l *redislockLocker) lock(ctx context.Context, name string) (*held, error) {
	for {
		lk, err := l.c.Obtain(ctx, name, l.ttl, &redislock.Options{RetryStrategy: l.retry})
		if err == nil {
			return &held{
				unlock: func() error { return lk.Release(context.Background()) },
				extend: func(ctx context.Context) error { return lk.Refresh(ctx, l.ttl, nil) },
			}, nil
		}
		// Obtain gives up after the TTL when ctx has no deadline; a
		// waiting caller calls it again.
		if ctx.Err() != nil {
			return nil, err
		}
	}
}

func (l *redislockLocker) close() { l.rdb.Close() }

// rueidisLocker is one rueidislock.Locker with its own rueidis client.
type rueidisLocker struct {
	lk rueidislock.Locker
}

func openRueidislock(tuned bool) func(string, openOpts) (locker, error) {
	return func(addr string, o openOpts) (locker, error) {
		opt := rueidislock.LockerOption{
			ClientOption: rueidis.ClientOption{InitAddress: []string{addr}},
		}
		if tuned {
			opt.KeyMajority = 1
			opt.NoLoopTracking = true
		}
		if o.lease > 0 {
			opt.KeyValidity, opt.ExtendInterval = o.lease, o.renew
		}
		if p := o.probe; p != nil {
			opt.ClientBuilder = func(co rueidis.ClientOption) (rueidis.Client, error) {
				c, err := rueidis.NewClient(co)
				if err != nil {
					return nil, err
				}
				return hookedRueidis{Client: c, p: p}, nil
			}
		}
		lk, err := rueidislock.NewLocker(opt)
		if err != nil {
			return nil, err
		}
		return &rueidisLocker{lk: lk}, nil
	}
}

func (l *rueidisLocker) owner(ctx context.Context) context.Context { return ctx }

func (l *rueidisLocker) lock(ctx context.Context, name string) (*held, error) {
	_, cancel, err := l.lk.WithContext(ctx, name)
	if err != nil {
		return nil, err
	}
	return &held{unlock: func() error { cancel(); return nil }}, nil
}

func (l *rueidisLocker) close() { l.lk.Close() }

// errStuck reports a lock call that neither acquired nor failed in time.
var errStuck = errors.New("lock call still waiting on a free lock: gave up")

// lockWithin calls l.lock and gives up after d, for calls that should not
// wait at all (a free lock): a waiter that misses its wake-up would
// otherwise block the run. Unlike a deadline, the context it passes is not
// cancelled once the lock is held, since rueidislock releases a lock whose
// context ends; it is cancelled by the returned unlock.
func lockWithin(ctx context.Context, l locker, name string, d time.Duration) (*held, error) {
	ctx, cancel := context.WithCancel(ctx)
	t := time.AfterFunc(d, cancel)
	h, err := l.lock(ctx, name)
	if !t.Stop() || err != nil {
		if h != nil {
			_ = h.unlock()
		}
		cancel()
		return nil, fmt.Errorf("%w after %v (%v)", errStuck, d, err)
	}
	unlock := h.unlock
	return &held{unlock: func() error { defer cancel(); return unlock() }, extend: h.extend}, nil
}
