package latch

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Options configure a Latch. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// TTL, if positive, is the time to live TrySetCount gives the latch's
	// count when it sets one, as semaphore's Options.TTL does for
	// TrySetPermits: a latch whose counters all died opens TTL later
	// rather than stay closed in Redis for ever. CountDown keeps the TTL,
	// and so does Redisson's countDown (a DECR). Zero (the default) sets
	// none. Redis keeps milliseconds: a TTL below 1ms is invalid.
	TTL time.Duration
}

// The messages on a latch's channel, as Redisson sends them.
const (
	opened   = "0" // a CountDown took the count to zero
	newCount = "1" // a count was set, or deleted
)

// A Latch is a distributed count-down latch. It is cheap to create, does
// no I/O until used, and is safe for concurrent use; any number of Latch
// values, in any number of processes, may name the same latch. The zero
// Latch is not usable (its methods return an error matching
// relock.ErrInvalidArgument, as do a nil *Latch's, whose Name is ""):
// create one with New.
type Latch struct {
	c       *core.Client
	name    string
	channel string // redisson_countdownlatch__channel__{<name>}
	// keys are the scripts' KEYS: the name, and the channel unless the
	// caller publishes (separate).
	keys []string
	// separate: the channel lies in another cluster slot than the count,
	// and is published on apart from the scripts.
	separate bool
	ttl      any   // Options.TTL in ms as a script argument, "0" for none
	err      error // bad input found by New, returned by every method
}

// errNil is the error of every operation of a nil *Latch.
var errNil = core.NilReceiver("latch", "Latch")

// New returns the latch named name on rc. Bad input (a nil client, an
// invalid name, a negative TTL) is not reported here but by every method
// of the returned Latch.
func New(rc *relock.Client, name string, opts *Options) *Latch {
	var o Options
	if opts != nil {
		o = *opts
	}
	// Redisson wraps the whole name in braces, even one with a hash tag
	// of its own (layout.LatchChannel).
	l := &Latch{c: core.Of(rc), name: name, channel: layout.LatchChannel(name), ttl: "0"}
	if o.TTL > 0 {
		l.ttl = transport.Millis(o.TTL)
	}
	switch {
	case l.c == nil:
		l.err = fmt.Errorf("latch: nil client: %w", relock.ErrInvalidArgument)
		return l
	case !core.ValidMillis(o.TTL):
		l.err = fmt.Errorf("latch: TTL %v: %w", o.TTL, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			l.err = fmt.Errorf("latch: %w", err)
		}
	}
	// Without a hash tag of the name's own, the channel's tag is the
	// whole name, which hashes to the count's slot; with one, the two
	// slots differ, but by chance.
	_, cluster := l.c.Redis.(*redis.ClusterClient)
	l.separate = cluster && strings.Contains(name, "{")
	l.keys = []string{name, l.channel}
	if l.separate {
		l.keys = l.keys[:1]
	}
	return l
}

// Name returns the latch's name, which is the Redis key of its count.
func (l *Latch) Name() string {
	if l == nil {
		return ""
	}
	return l.name
}

// check returns the latch's input error or relock.ErrClosed.
func (l *Latch) check(ctx context.Context) error {
	if l.err != nil {
		return l.err
	}
	return l.c.Check(ctx)
}

func (l *Latch) errorf(op string, err error) error {
	return fmt.Errorf("latch: %s %q: %w", op, l.name, err)
}

// TrySetCount gives the latch the count n, which must be positive, if it
// is open (has no count), and reports whether it did; with Options.TTL
// the count expires TTL later. Setting a count wakes the latch's waiters,
// which find it and go on waiting.
//
// On a cluster, for a name with a hash tag, the announcement is a
// command of its own after the script (see the package documentation);
// if it fails, TrySetCount reports true with the error, as Delete does.
func (l *Latch) TrySetCount(ctx context.Context, n int64) (bool, error) {
	if l == nil {
		return false, errNil
	}
	if err := l.check(ctx); err != nil {
		return false, err
	}
	switch {
	case n <= 0:
		return false, fmt.Errorf("latch: count %d of %q is not positive: %w", n, l.name, relock.ErrInvalidArgument)
	case !transport.CountOK(n):
		return false, fmt.Errorf("latch: count %d of %q is above relock.MaxCount: %w", n, l.name, relock.ErrInvalidArgument)
	}
	return l.run(ctx, "set count", lua.LatchTrySetCount(), newCount, n, l.c.T.PublishArg(), l.ttl)
}

// CountDown takes one off the latch's count. The CountDown that reaches
// zero deletes the count, which opens the latch, and wakes its waiters.
// On an open latch it does nothing.
//
// An error leaves it unknown whether the count went down: a CountDown is
// not retried, as it must not count twice.
func (l *Latch) CountDown(ctx context.Context) error {
	if l == nil {
		return errNil
	}
	if err := l.check(ctx); err != nil {
		return err
	}
	_, err := l.run(ctx, "count down", lua.LatchCountDown(), opened, l.c.T.PublishArg())
	return err
}

// Delete deletes the latch's count, whatever it is, which opens the
// latch and wakes its waiters. It reports whether there was a count.
func (l *Latch) Delete(ctx context.Context) (bool, error) {
	if l == nil {
		return false, errNil
	}
	if err := l.check(ctx); err != nil {
		return false, err
	}
	return l.run(ctx, "delete", lua.LatchDelete(), newCount, l.c.T.PublishArg())
}

// Count returns the latch's count: 0 when it is open.
func (l *Latch) Count(ctx context.Context) (int64, error) {
	if l == nil {
		return 0, errNil
	}
	if err := l.check(ctx); err != nil {
		return 0, err
	}
	n, err := l.count(ctx)
	if err != nil {
		return 0, l.errorf("count", err)
	}
	return n, nil
}

// count reads the count; a missing key is 0.
func (l *Latch) count(ctx context.Context) (int64, error) {
	n, _, err := transport.OptionalInt(l.c.Redis.Get(ctx, l.name))
	return n, err
}

// run runs one of the latch's scripts, whose reply 1 means that message
// is due on the channel, and publishes it when the script could not. It
// reports whether the reply was 1. The latch's input is checked.
//
// Scripts go through the client's script connection, which never resends
// a command whose reply was lost: a CountDown resent would count twice.
// The separate publish may be resent: a message twice only has the
// waiters read the count twice.
func (l *Latch) run(ctx context.Context, op string, s *redis.Script, message string, args ...any) (bool, error) {
	end, err := l.c.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	reply, err := transport.Eval(ctx, l.c.Scripts, s, l.keys, args...)
	if err != nil {
		return false, l.errorf(op, err)
	}
	if reply != int64(1) {
		return false, nil
	}
	if l.separate {
		if err := l.c.Redis.Do(ctx, l.c.T.Publish(), l.channel, message).Err(); err != nil {
			return true, l.errorf(op, fmt.Errorf("done, but announcing it on %s failed: %w", l.channel, err))
		}
	}
	return true, nil
}
