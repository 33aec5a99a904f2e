package permits

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/registry"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/observe"
)

// Options configure a Semaphore. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease: a permit expires Lease after its acquire
	// unless released first, nothing renews it, and its context's
	// deadline is the lease's end. Zero (the default) lets the client's
	// watchdog renew each permit while it is held. Redis keeps
	// milliseconds: a Lease below 1ms is invalid.
	Lease time.Duration
}

// A Semaphore is a distributed semaphore whose permits expire unless
// renewed: Redisson's RPermitExpirableSemaphore. It is cheap to create,
// does no I/O until used, and is safe for concurrent use; any number of
// Semaphore values may name the same semaphore. The zero Semaphore is not
// usable: create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Semaphore struct {
	c    *core.Client
	name string
	// keys: the count, redisson_sc:{<name>}, relock's registry of
	// waiters relock_semaphore_waiters:{<name>} and its watcher
	// relock_semaphore_watcher:{<name>}, the waiters' channel prefix
	// relock_sc:{<name>}, the permits ZSET {<name>}:timeout, and
	// relock's record of given-up permit ids
	// relock_permits_gone:{<name>}: every script's KEYS
	// (internal/lua/permits_prelude.lua).
	keys []string
	// waiters is this client's channel for its waiters,
	// relock_sc:{<name>}:<client id>, and wake its wake policy, whose
	// echo marks speak of the shared channel, keys[1].
	waiters string
	wake    hub.Wake
	// registry is its waiters' way to the registry, through keys[:5].
	registry registry.Semaphore
	lease    time.Duration // Options.Lease, whole milliseconds
	err      error         // bad input found by New, returned by every method
	leaseMs  any           // the lease acquires set, in ms, boxed once
	renewMs  any           // the watchdog's lease, in ms, boxed once
}

// errNil is the error of every operation of a nil *Semaphore.
var errNil = core.NilReceiver("permits", "Semaphore")

// New returns the semaphore named name on rc. Bad input (a nil client, an
// invalid name, a negative lease) is not reported here but by every
// method of the returned Semaphore.
func New(rc *relock.Client, name string, opts *Options) *Semaphore {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Semaphore{
		c:    core.Of(rc),
		name: name,
		keys: []string{name, layout.SemaphoreChannel(name), layout.SemaphoreWaiters(name),
			layout.SemaphoreWatcher(name), layout.SemaphoreClientChannels(name), layout.PermitTimeouts(name),
			layout.PermitsGone(name)},
		// Redis keeps whole milliseconds: the context's deadline must not
		// outlast the expiry the server sets.
		lease: o.Lease.Truncate(time.Millisecond),
	}
	switch {
	case s.c == nil:
		s.err = fmt.Errorf("permits: nil client: %w", relock.ErrInvalidArgument)
	case !core.ValidMillis(o.Lease):
		s.err = fmt.Errorf("permits: lease %v: %w", o.Lease, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			s.err = fmt.Errorf("permits: %w", err)
		}
	}
	s.wake = hub.WakeTagged(s.keys[1])
	s.registry.Init(s.c, s.keys[:5])
	if s.c != nil {
		s.waiters = layout.SemaphoreClientChannel(name, s.c.ID)
		s.renewMs = transport.Millis(s.c.WatchdogTimeout)
		s.leaseMs = s.renewMs
		if o.Lease > 0 {
			s.leaseMs = transport.Millis(o.Lease)
		}
	}
	return s
}

// Name returns the semaphore's name, the Redis key of its count.
func (s *Semaphore) Name() string {
	if s == nil {
		return ""
	}
	return s.name
}

// begin starts an operation that runs scripts (see core.Client.Begin).
func (s *Semaphore) begin(ctx context.Context) (end func(), err error) {
	if s.err != nil {
		return nil, s.err
	}
	return s.c.Begin(ctx)
}

func (s *Semaphore) errorf(op string, err error) error {
	return fmt.Errorf("permits: %s %q: %w", op, s.name, err)
}

// TrySetPermits sets the count of available permits to n if the
// semaphore has none set yet, and reports whether it did. A semaphore
// must be set up so before its first Acquire can succeed.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (bool, error) {
	if s == nil {
		return false, errNil
	}
	end, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	switch {
	case n < 0:
		return false, s.errorf("set permits of", fmt.Errorf("negative count %d: %w", n, relock.ErrInvalidArgument))
	case !transport.CountOK(n):
		return false, s.errorf("set permits of", fmt.Errorf("count %d above relock.MaxCount: %w", n, relock.ErrInvalidArgument))
	}
	reply, err := transport.Eval(ctx, s.c.Redis, lua.PermitsSet(), s.keys, s.c.T.PublishArg(), n)
	if err != nil {
		return false, s.errorf("set permits of", err)
	}
	return reply == int64(1), nil
}

// AddPermits adds delta to the count of available permits; a negative
// delta takes permits away (the count may go below zero, and then
// acquires wait until releases bring it back above).
func (s *Semaphore) AddPermits(ctx context.Context, delta int64) error {
	if s == nil {
		return errNil
	}
	end, err := s.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	if !transport.CountOK(delta) {
		return s.errorf("add permits to", fmt.Errorf("delta %d beyond relock.MaxCount: %w", delta, relock.ErrInvalidArgument))
	}
	if _, err := transport.Eval(ctx, s.c.Redis, lua.PermitsAdd(), s.keys, s.c.T.PublishArg(), delta); err != nil {
		return s.errorf("add permits to", err)
	}
	return nil
}

// AvailablePermits returns the count of permits that an Acquire could
// take now, after returning expired permits to it; 0 when the semaphore
// has none set.
func (s *Semaphore) AvailablePermits(ctx context.Context) (int64, error) {
	if s == nil {
		return 0, errNil
	}
	end, err := s.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	reply, err := transport.Eval(ctx, s.c.Redis, lua.PermitsAvailable(), s.keys, s.c.T.PublishArg())
	if err != nil {
		return 0, s.errorf("available permits of", err)
	}
	n, err := transport.ReplyInt(reply)
	if err != nil {
		return 0, s.errorf("available permits of", err)
	}
	return n, nil
}

// Release gives back the permit with id, whoever acquired it (a Permit of
// this client or another, or a Redisson client's permit), and wakes
// waiters. It returns an error matching relock.ErrNotHeld, and changes
// nothing, when no such permit is held: released already, expired, or
// never acquired. Like Permit.Release it runs even when ctx is done.
func (s *Semaphore) Release(ctx context.Context, id string) error {
	if s == nil {
		return errNil
	}
	if s.err != nil {
		return s.err
	}
	p, err := s.parse(id)
	if err != nil {
		return s.errorf("release", err)
	}
	return s.mustRelease(ctx, p)
}

// TryRelease is Release reporting a permit not held as false rather than
// as an error.
func (s *Semaphore) TryRelease(ctx context.Context, id string) (bool, error) {
	if s == nil {
		return false, errNil
	}
	if s.err != nil {
		return false, s.err
	}
	p, err := s.parse(id)
	if err != nil {
		return false, s.errorf("release", err)
	}
	return s.release(ctx, p)
}

// mustRelease is release reporting a permit not held as an error
// matching relock.ErrNotHeld.
func (s *Semaphore) mustRelease(ctx context.Context, p permitID) error {
	released, err := s.release(ctx, p)
	if err == nil && !released {
		err = s.errorf("release", fmt.Errorf("permit %s: %w", p.hex, relock.ErrNotHeld))
	}
	return err
}

// release releases p in Redis and ends its local hold, if this client has
// one: plainly when the permit was released, with ErrLockLost when Redis
// no longer had it, and with ErrLockLost too when the outcome is unknown
// (no reply: the permit, if still held, is left to its lease).
func (s *Semaphore) release(ctx context.Context, p permitID) (released bool, err error) {
	end, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	octx, observed := s.c.StartUnlock(ctx, "permits", observe.OpRelease, s.name)
	if observed != nil {
		defer func() { observed(err) }()
	}
	// The release runs by ctx's deadline, or within core.Grace when ctx
	// is done already; one that gets no answer is sent again in the
	// background: a release by id is safe to repeat (only the call that
	// removes the id from the set adds it to the count).
	key := s.holdKey(p)
	u := s.c.BeginUnlock(key) // the hold protocol (core/protocol.go)
	defer u.End()
	var reply any
	err = s.c.Settle(octx, key, func(ctx context.Context) error {
		var err error
		reply, err = transport.Eval(ctx, s.c.Pipe, lua.PermitsRelease(), s.keys, s.c.T.PublishArg(), p.raw)
		return err
	})
	if err != nil {
		_, _ = u.Done(ctx, nil, err)
		return false, s.errorf("release", transport.Ended(ctx, nil, err))
	}
	if reply != int64(1) {
		reply = nil // the script's 0: no such permit
	}
	released, _ = u.Done(ctx, reply, nil)
	return released, nil
}

// UpdateLease sets the permit with id to expire lease from now, and
// reports whether it is held (false: released or expired, and nothing
// changes); Redisson's updateLeaseTime. It is for permits that Redisson
// clients hold. A relock holder keeps its permit's lease itself and is
// not told of the change: a lease shortened under it may end before the
// holder's context does, breaking its guarantee. A permit held by this
// client is therefore refused (relock.ErrInvalidArgument); one held by
// another relock client is the caller's responsibility.
func (s *Semaphore) UpdateLease(ctx context.Context, id string, lease time.Duration) (bool, error) {
	if s == nil {
		return false, errNil
	}
	end, err := s.begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	p, err := s.parse(id)
	if err != nil {
		return false, s.errorf("update lease in", err)
	}
	switch {
	case lease < time.Millisecond:
		return false, s.errorf("update lease in", fmt.Errorf("lease %v: %w", lease, relock.ErrInvalidArgument))
	case s.c.Holding(s.holdKey(p)):
		return false, s.errorf("update lease in", fmt.Errorf("permit %s is held by this client, which keeps its lease: %w", id, relock.ErrInvalidArgument))
	}
	reply, err := transport.Eval(ctx, s.c.Redis, lua.PermitsUpdate(), s.keys, s.c.T.PublishArg(), p.raw, transport.Millis(lease))
	if err != nil {
		return false, s.errorf("update lease in", err)
	}
	return reply == int64(1), nil
}

// A permitID is a permit's id: 16 random bytes, Redisson's form. The
// permits ZSET holds them raw; users see them as 32 lower-case hex
// digits, as Redisson shows them.
type permitID struct {
	hex string
	raw string
}

// idBytes is the length of a permit id.
const idBytes = 16

// parse reads a permit id given by a user, in either case.
func (s *Semaphore) parse(id string) (permitID, error) {
	raw, err := hex.DecodeString(id)
	if err != nil || len(raw) != idBytes {
		return permitID{}, fmt.Errorf("permit id %q is not %d hex digits: %w", id, 2*idBytes, relock.ErrInvalidArgument)
	}
	return permitID{hex: hex.EncodeToString(raw), raw: string(raw)}, nil
}

// holdKey names p's local hold: one hold per permit.
func (s *Semaphore) holdKey(p permitID) core.HoldKey {
	return core.HoldKey{Name: s.name, Field: p.hex}
}
