package semaphore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/registry"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/observe"
)

// Options configure a Semaphore. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// TTL, if positive, is the time to live TrySetPermits gives the
	// semaphore's key when it creates it, as Redisson's
	// trySetPermits(permits, timeToLive) does: the semaphore and its
	// permits vanish TTL later. Acquire and Release keep the key's TTL;
	// AddPermits and DrainPermits, like Redisson's, remove it. Zero (the
	// default) sets none. Redis keeps milliseconds: a TTL below 1ms is
	// invalid.
	TTL time.Duration
}

// A Semaphore is a distributed counting semaphore. It is cheap to create,
// does no I/O until used, and is safe for concurrent use; any number of
// Semaphore values, on any number of clients, may name the same
// semaphore. The zero Semaphore is not usable: create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Semaphore struct {
	c       *core.Client
	name    string
	channel string // redisson_sc:{<name>}
	// waiters is this client's channel for its waiters,
	// relock_sc:{<name>}:<client id>, and wake its wake policy, whose
	// echo marks speak of channel.
	waiters string
	wake    hub.Wake
	// keys: name, channel, relock_semaphore_waiters:{<name>},
	// relock_semaphore_watcher:{<name>}, relock_sc:{<name>},
	// relock_semaphore_grants:{<name>},
	// relock_semaphore_attempts:{<name>}: the scripts' KEYS
	// (internal/lua/semaphore_prelude.lua).
	keys []string
	// registry is its waiters' way to the registry, through keys.
	registry registry.Semaphore
	ttl      any   // Options.TTL in ms as a script argument, "0" for none
	err      error // bad input found by New, returned by every method
}

// errNil is the error of every operation of a nil *Semaphore.
var errNil = core.NilReceiver("semaphore", "Semaphore")

// New returns the semaphore named name on rc. Bad input (a nil client, an
// invalid name, a negative TTL) is not reported here but by every method
// of the returned Semaphore.
func New(rc *relock.Client, name string, opts *Options) *Semaphore {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Semaphore{
		c:       core.Of(rc),
		name:    name,
		channel: layout.SemaphoreChannel(name),
		ttl:     "0",
	}
	s.wake = hub.WakeTagged(s.channel)
	s.keys = []string{name, s.channel, layout.SemaphoreWaiters(name),
		layout.SemaphoreWatcher(name), layout.SemaphoreClientChannels(name), layout.SemaphoreGrants(name),
		layout.SemaphoreAttempts(name)}
	s.registry.Init(s.c, s.keys)
	if s.c != nil {
		s.waiters = layout.SemaphoreClientChannel(name, s.c.ID)
	}
	switch {
	case s.c == nil:
		s.err = fmt.Errorf("semaphore: nil client: %w", relock.ErrInvalidArgument)
	case !core.ValidMillis(o.TTL):
		s.err = fmt.Errorf("semaphore: TTL %v: %w", o.TTL, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			s.err = fmt.Errorf("semaphore: %w", err)
		}
	}
	if o.TTL > 0 {
		s.ttl = transport.Millis(o.TTL)
	}
	return s
}

// Name returns the semaphore's name, which is its Redis key.
func (s *Semaphore) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// Acquire waits until it has taken n permits, all at once, or ctx ends.
// n must be positive. The permits are the caller's to Release; nothing
// records that it holds them.
//
// If ctx ends first, Acquire returns an error matching both
// relock.ErrNotAcquired and ctx.Err(), and takes nothing. It returns
// relock.ErrClosed when the client closes.
func (s *Semaphore) Acquire(ctx context.Context, n int64) error {
	if s == nil {
		return errNil
	}
	return s.acquire(ctx, "acquire", n, -1)
}

// TryAcquire is Acquire waiting at most wait; 0 means one attempt. It
// returns an error matching relock.ErrNotAcquired when it gives up, which
// says "no permits set" when the semaphore has no count: none was set
// (TrySetPermits), or it was deleted or expired. An acquire on a missing
// count fails as Redisson's does, and waits as one on a count of 0.
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) error {
	if s == nil {
		return errNil
	}
	if wait < 0 {
		return s.invalid("try acquire", fmt.Sprintf("negative wait %v", wait))
	}
	return s.acquire(ctx, "try acquire", n, wait)
}

func (s *Semaphore) acquire(ctx context.Context, op string, n int64, bound time.Duration) error {
	if err := s.permits(op, n); err != nil {
		return err
	}
	end, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer end()
	tag := "g" + strconv.FormatUint(lastTag.Add(1), 10)
	a := newAttempt(s, n, tag)
	oop := observe.OpAcquire
	if bound >= 0 {
		oop = observe.OpTryAcquire
	}
	octx, done := s.c.StartAcquire(ctx, "semaphore", oop, s.name)
	// The waiter listens on its client's channel and, while it is the
	// watcher, on the shared one (wait.Outcome.Also).
	err = wait.Acquire(octx, wait.Spec{Hub: s.c.Hub(), Channel: s.waiters, Tag: tag, Acquirer: a,
		Wake: s.wake, AlsoWake: hub.WakeCount,
		Wait: bound, Done: done})
	if err != nil {
		return s.errorf(op, s.c.T.NoCount(ctx, s.name, err))
	}
	return nil
}

// Release returns n permits, which must be positive, and wakes the
// registered waiters they can satisfy, the longest waiting first,
// publishing the new count for Redisson's. It does not check that the
// caller acquired them: releasing more than were taken adds permits.
// Release returns by ctx's deadline (or within a few tens of
// milliseconds when ctx is done already); the release itself runs on a
// context of its own, with ctx's values and bounded by relock.OpTimeout,
// and goes on in the background when ctx ends first, and the error then
// matches ctx's (context.DeadlineExceeded): do not release again.
//
// Release is sent once and never retried: when its reply is lost (the
// connection failed), it returns the error, and the permits may or may
// not have been returned. Sending it again could return them twice.
func (s *Semaphore) Release(ctx context.Context, n int64) (err error) {
	if s == nil {
		return errNil
	}
	if err := s.permits("release", n); err != nil {
		return err
	}
	end, err := s.begin(ctx, "release")
	if err != nil {
		return err
	}
	defer end()
	octx, observed := s.c.StartUnlock(ctx, "semaphore", observe.OpRelease, s.name)
	if observed != nil {
		defer func() { observed(err) }()
	}
	// A release must neither be lost to ctx's deadline nor sent twice:
	// it runs on its own context, and when ctx ends first it goes on in
	// the background (core.Client.Outlive).
	if _, err := s.c.Outlive(octx, func(ctx context.Context) (any, error) { return s.release(ctx, n) }, nil); err != nil {
		return s.errorf("release", err)
	}
	return nil
}

// release runs the release script: INCRBY n, hand permits to the
// waiters they can satisfy and publish what is left. It acknowledges the
// grants the client's waiters took (acks.go).
func (s *Semaphore) release(ctx context.Context, n any) (any, error) {
	acks := s.takeAcks()
	reply, err := transport.Eval(ctx, s.c.Pipe, lua.SemaphoreRelease(), s.keys, s.c.T.PublishArg(), n, acks.arg())
	if err != nil {
		s.restoreAcks(acks)
	}
	return reply, err
}

// undo undoes acquire number of registry member, whose reply was lost
// (internal/lua/semaphore_undo.lua): the permits it took go back, or it takes
// nothing when it runs late.
func (s *Semaphore) undo(ctx context.Context, member string, number int64) error {
	_, err := transport.Eval(ctx, s.c.Redis, lua.SemaphoreUndo(), s.keys, s.c.T.PublishArg(), member, number, s.c.WatchdogArg)
	return err
}

// TrySetPermits sets the available permits to n, and wakes the waiters
// they can satisfy as Release does, if the semaphore has no count yet
// (its key is absent); with Options.TTL the key expires TTL later. It
// reports whether it set the count. n may be zero or negative (releases
// must then come before any acquire succeeds), as in Redisson.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	if s == nil {
		return false, errNil
	}
	if !transport.CountOK(n) {
		return false, s.invalid("try set permits", fmt.Sprintf("%d permits, beyond relock.MaxCount", n))
	}
	end, err := s.begin(ctx, "try set permits")
	if err != nil {
		return false, err
	}
	defer end()
	reply, err := transport.Eval(ctx, s.c.Scripts, lua.SemaphoreTrySet(), s.keys, s.c.T.PublishArg(), n, s.ttl)
	if err != nil {
		return false, s.errorf("try set permits", err)
	}
	return reply == int64(1), nil
}

// AddPermits changes the available permits by delta, which may be
// negative, creating the count at delta when there is none, and wakes
// the waiters the new count can satisfy as Release does. As Redisson's
// addPermits does, it leaves the key without a TTL. Like Release, it is
// never retried.
func (s *Semaphore) AddPermits(ctx context.Context, delta int64) error {
	if s == nil {
		return errNil
	}
	if !transport.CountOK(delta) {
		return s.invalid("add permits", fmt.Sprintf("delta %d beyond relock.MaxCount", delta))
	}
	end, err := s.begin(ctx, "add permits")
	if err != nil {
		return err
	}
	defer end()
	if _, err := transport.Eval(ctx, s.c.Scripts, lua.SemaphoreAdd(), s.keys, s.c.T.PublishArg(), delta); err != nil {
		return s.errorf("add permits", err)
	}
	return nil
}

// AvailablePermits returns the permits available now: 0 when the
// semaphore has no count.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	if s == nil {
		return 0, errNil
	}
	if err := s.check(ctx, "available permits"); err != nil {
		return 0, err
	}
	n, _, err := transport.OptionalInt(s.c.Redis.Get(ctx, s.name))
	if err != nil {
		return 0, s.errorf("available permits", err)
	}
	return n, nil
}

// DrainPermits takes every available permit and returns how many it
// took: it sets an existing count to 0 (dropping a TTL, as Redisson
// does) and leaves an absent one absent. A negative count is raised to 0
// and returned as it was, as java.util.concurrent.Semaphore does. It wakes
// nobody. Like Release, it is never retried.
func (s *Semaphore) DrainPermits(ctx context.Context) (int64, error) {
	if s == nil {
		return 0, errNil
	}
	end, err := s.begin(ctx, "drain permits")
	if err != nil {
		return 0, err
	}
	defer end()
	reply, err := transport.Eval(ctx, s.c.Scripts, lua.SemaphoreDrain(), s.keys[:1])
	if err == nil {
		var n int64
		if n, err = transport.ReplyInt(reply); err == nil {
			return n, nil
		}
	}
	return 0, s.errorf("drain permits", err)
}

// check returns the semaphore's input error or relock.ErrClosed.
func (s *Semaphore) check(ctx context.Context, op string) error {
	if s.err != nil {
		return s.err
	}
	if err := s.c.Check(ctx); err != nil {
		return s.errorf(op, err)
	}
	return nil
}

// begin is check for an operation that runs scripts (core.Client.Begin):
// the client's Close waits for end.
func (s *Semaphore) begin(ctx context.Context, op string) (end func(), err error) {
	if s.err != nil {
		return nil, s.err
	}
	if end, err = s.c.Begin(ctx); err != nil {
		return nil, s.errorf(op, err)
	}
	return end, nil
}

// permits checks the input of an operation taking n permits.
func (s *Semaphore) permits(op string, n int64) error {
	if s.err != nil {
		return s.err
	}
	switch {
	case n <= 0:
		return s.invalid(op, fmt.Sprintf("%d permits, want at least 1", n))
	case !transport.CountOK(n):
		return s.invalid(op, fmt.Sprintf("%d permits, above relock.MaxCount", n))
	}
	return nil
}

func (s *Semaphore) invalid(op, what string) error {
	if s.err != nil {
		return s.err
	}
	return s.errorf(op, fmt.Errorf("%s: %w", what, relock.ErrInvalidArgument))
}

func (s *Semaphore) errorf(op string, err error) error {
	return fmt.Errorf("semaphore: %s %q: %w", op, s.name, err)
}
