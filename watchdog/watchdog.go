package watchdog

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/transport"
)

var (
	// ErrGone is the reason a lease is lost when its renewal replies 0:
	// the lock is gone from Redis, or held by someone else.
	ErrGone = renew.ErrGone
	// ErrExpired is the reason a lease is lost when no renewal succeeded
	// before the server may have expired it.
	ErrExpired = renew.ErrExpired
	// ErrClosed is returned by Watch after Close.
	ErrClosed = relock.ErrClosed
)

// A Renewal is the script call that renews one lock. The script must reply
// 1 while the lock is held (after extending it) and 0 once it is gone.
type Renewal struct {
	// Script is the renewal script, such as scripts.Renew() for a
	// Redisson RLock.
	Script *redis.Script
	// Keys and Args are the script's KEYS and ARGV. Every key must hash
	// to one slot on Redis Cluster.
	Keys []string
	Args []any
	// Timeout is the lease the script sets, when it is not the
	// watchdog's (0): the lease is renewed every Timeout/3, and reported
	// lost as Options.Margin says for a lease of that timeout. It must
	// not be negative.
	Timeout time.Duration
}

// A Lease is one lock kept alive by a Watchdog, from Watch until it ends.
// It must not be copied.
// A nil *Lease's Stop does nothing.
type Lease struct {
	l renew.Lease
}

// Stop ends the lease's renewals. Once Stop returns, lost is not called
// unless the call had already begun (as with time.Timer's Stop). Stop is
// idempotent, and lost may call it.
func (l *Lease) Stop() {
	if l == nil {
		return
	}
	l.l.Stop()
}

// A Watchdog renews leases in batched rounds. Its goroutine runs from New
// until Close.
// A nil *Watchdog's methods return an error matching
// relock.ErrInvalidArgument.
type Watchdog struct {
	w *renew.Watchdog
}

// errNil is the error of every operation of a nil *Watchdog.
var errNil = core.NilReceiver("watchdog", "Watchdog")

// Options configure a Watchdog. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Timeout is the lease the watchdog renews: each Renewal must extend
	// its lock to Timeout (its Args say so), unless it sets a Timeout of
	// its own, and the watchdog renews it every Timeout/3. It is relock's
	// Options.WatchdogTimeout. Default relock.DefaultWatchdogTimeout; at
	// least relock.MinWatchdogTimeout.
	Timeout time.Duration

	// Margin is how long before the send time of its last successful
	// renewal plus the timeout a lease that no renewal reached is
	// reported lost. It is relock's Options.LeaseMargin: why, and its
	// limits, in relock's docs/guarantees.md. Default a tenth of the
	// timeout (the same fraction of a Renewal.Timeout); below Timeout/2.
	Margin time.Duration

	// BatchSize is how many renewals the watchdog sends at most in one
	// pipeline (one round trip a Redis node): relock's
	// Options.WatchdogBatchSize, which says how to choose it. Default
	// DefaultBatchSize; not negative.
	BatchSize int

	// Logger, if not nil, is told of failed rounds. Default none.
	Logger *slog.Logger
}

// DefaultBatchSize is how many renewals a batch carries at most unless
// Options.BatchSize says otherwise.
const DefaultBatchSize = renew.DefaultBatchSize

// New starts a watchdog over rdb, which it does not close. Unless rdb
// cuts calls off at their context's deadline (ContextTimeoutEnabled),
// the watchdog sends its rounds on a client of its own with rdb's
// options, which Close closes. Its error, matching
// relock.ErrInvalidArgument, reports bad options only; no watchdog is
// started then.
func New(rdb redis.UniversalClient, opts *Options) (*Watchdog, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = relock.DefaultWatchdogTimeout
	}
	switch {
	case transport.IsNil(rdb):
		return nil, fmt.Errorf("watchdog: nil redis client: %w", relock.ErrInvalidArgument)
	case o.Timeout < relock.MinWatchdogTimeout:
		return nil, fmt.Errorf("watchdog: Timeout %v below %v: %w", o.Timeout, relock.MinWatchdogTimeout, relock.ErrInvalidArgument)
	case o.Margin < 0 || o.Margin >= o.Timeout/2:
		return nil, fmt.Errorf("watchdog: Margin %v not in [0, Timeout/2 = %v): %w", o.Margin, o.Timeout/2, relock.ErrInvalidArgument)
	case o.BatchSize < 0:
		return nil, fmt.Errorf("watchdog: negative BatchSize %d: %w", o.BatchSize, relock.ErrInvalidArgument)
	}
	w := renew.New(rdb, o.Timeout, o.Logger)
	// Both in range, checked above.
	if o.Margin > 0 {
		_ = w.SetMargin(o.Margin)
	}
	if o.BatchSize > 0 {
		_ = w.SetBatchSize(o.BatchSize)
	}
	return &Watchdog{w}, nil
}

// Watch starts renewing a lock acquired by a call sent at acquired. lost is
// called at most once, from the watchdog's goroutine, when the lease ends
// other than by Lease.Stop or Close; it must not block.
func (w *Watchdog) Watch(r Renewal, acquired time.Time, lost func(reason error)) (*Lease, error) {
	if w == nil {
		return nil, errNil
	}
	l := new(Lease)
	// Renewal has renew.Renewal's fields: the conversion copies them.
	if err := w.w.Start(&l.l, renew.Renewal(r), acquired, lostFunc(lost)); err != nil {
		return nil, err
	}
	return l, nil
}

// lostFunc is Watch's lost as a renew.Holder.
type lostFunc func(reason error)

func (f lostFunc) LeaseLost(reason error) { f(reason) }

// Close ends every lease without calling lost and waits for the
// watchdog's goroutines to return. It is idempotent: only the first call
// returns the error of closing the watchdog's own client (see New).
func (w *Watchdog) Close() error {
	if w == nil {
		return errNil
	}
	return w.w.Close()
}
