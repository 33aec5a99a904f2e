// Package transport sends relock's scripts to Redis for package core's
// Client: a script run (Call, Eval), an acquire with its replica wait
// (Transport.RunAcquire), the publish command, and the decoding of their
// replies. It knows nothing of locks and holds, which are core's. Where
// it sits among relock's layers: docs/architecture.md.
//
// # Boxed arguments
//
// A value passed as an any is copied to the heap ("boxed") every time it
// is converted, unless it is a constant or an integer below 256. A script's
// digest, a lock's keys, a client's watchdog timeout and the publish
// command are the same for every call, so relock boxes each once (Call,
// KeyArgs, PublishArg) and a call boxes only what changes. Comments
// elsewhere that say "boxed once" refer here.
//
// # State and locks
//
// A Transport is made whole by New and then read-only but for its
// publish command, stored once (SetSharded), and three parts, each with
// a mutex of its own, all leaves: a Pipe's batcher.mu (pipe.go),
// syncs.mu (sync.go) and evictions.mu (evict.go). None is
// held while a call is sent, while a goroutine starts, or while core is
// called back (Owner, Config.Observer); core's package doc gives their
// place in its lock order.
package transport

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/observe"
)

// OpTimeout bounds a Redis call made for a caller whose context has no
// deadline, and each piece of clean-up that goes on in the background.
const OpTimeout = 5 * time.Second

// An Owner is what a Transport needs of the client that made it
// (core.Client): goroutines that Shutdown waits for, on contexts that
// end with Shutdown's cut-off.
type Owner interface {
	// Background runs f in a goroutine the owner waits for, and reports
	// false, running nothing, once the owner is shutting down.
	Background(f func()) bool
	// BackgroundContext returns the context of background work for ctx:
	// its values, bounded by OpTimeout and the owner's cut-off.
	BackgroundContext(ctx context.Context) (context.Context, context.CancelFunc)
}

// Config is what a Transport is made of.
type Config struct {
	// SyncReplicas is the replicas an acquire waits for: SyncAuto, a
	// count, or negative for none; SyncTimeout how long it waits.
	SyncReplicas int
	SyncTimeout  time.Duration
	// DisablePipelining sends each call through Pipe on its own.
	DisablePipelining bool
	// NotAcquired is what an acquire the replicas did not confirm
	// matches (core.ErrNotAcquired).
	NotAcquired error
	// Log and Observer are told of masters that may evict keys
	// (evict.go); either may be nil.
	Log      *slog.Logger
	Observer observe.Observer
	// Owner runs the transport's background work; End ends when the
	// owner's Shutdown cuts its work off, and bounds a Pipe's batches.
	Owner Owner
	End   context.Context
}

// A Transport is how a client's scripts reach Redis. New sets every
// field; none changes after it returns.
type Transport struct {
	// Redis sends relock's calls other than acquires (give-ups, state
	// queries, renewals): see callClient.
	Redis redis.UniversalClient
	// Scripts sends acquires and unlocks: see scriptClient.
	Scripts redis.UniversalClient
	// Pipe is Scripts through a Pipe, which pipelines the calls of
	// goroutines that meet (pipe.go); Scripts itself when
	// Config.DisablePipelining is set. Lock types send acquires, unlocks
	// and releases through it.
	Pipe redis.Scripter

	cfg                      Config
	closeScripts, closeCalls func() error

	// pub is the publish command once the pub/sub mode is decided
	// (SetSharded); nil before. Stored once, read without a lock.
	pub atomic.Pointer[publisher]

	syncs syncs     // the masters' reports of their replicas (sync.go)
	evict evictions // the masters told of for eviction (evict.go)
}

// New makes the transport of a client over the caller's rdb. It sends
// nothing to Redis.
func New(rdb redis.UniversalClient, cfg Config) *Transport {
	t := &Transport{cfg: cfg}
	t.Scripts, t.closeScripts = scriptClient(rdb)
	t.Redis, t.closeCalls = callClient(rdb)
	t.syncs.views = make(map[string]replicaView)
	t.evict.told = make(map[string]bool)
	t.Pipe = t.Scripts
	if !cfg.DisablePipelining {
		t.Pipe = newPipe(t)
	}
	return t
}

// Close closes relock's own copies of the caller's client (scriptClient,
// callClient). The owner calls it once, when nothing is sent any more.
func (t *Transport) Close() error {
	return errors.Join(t.closeScripts(), t.closeCalls())
}

// A publisher is the command the scripts publish with, and it as a
// script argument, boxed once.
type publisher struct {
	cmd string
	arg any
}

// publishers are the commands of global and of sharded pub/sub.
var publishers = [2]publisher{{"PUBLISH", "PUBLISH"}, {"SPUBLISH", "SPUBLISH"}}

// SetSharded sets the publish command of the client's pub/sub mode,
// once it is decided: SPUBLISH when sharded, else PUBLISH.
func (t *Transport) SetSharded(sharded bool) {
	p := &publishers[0]
	if sharded {
		p = &publishers[1]
	}
	t.pub.Store(p)
}

// publisher returns the publish command. It panics before SetSharded.
func (t *Transport) publisher() *publisher {
	p := t.pub.Load()
	if p == nil {
		panic("transport: the publish command read before the pub/sub mode was decided (core's Check or Begin)")
	}
	return p
}

// Publish is the command the client's scripts publish with: PUBLISH, or
// SPUBLISH in sharded mode. It may be called only after core's Check or
// Begin returned nil.
func (t *Transport) Publish() string { return t.publisher().cmd }

// PublishArg is Publish as a script argument, boxed once. It may be
// called only after core's Check or Begin returned nil.
func (t *Transport) PublishArg() any { return t.publisher().arg }
