package reentrant

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/scripts"
	"github.com/relock-go/relock/watchdog"
)

// Options configure a Mutex. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease: the lock expires Lease after each acquire
	// unless unlocked first, and nothing renews it. Zero (the default)
	// lets the client's watchdog renew the lease while the lock is held.
	// Redis keeps milliseconds: a Lease below 1ms is invalid.
	Lease time.Duration

	// Fencing makes every acquire, re-entry included, increment the
	// counter "redisson_lock_token:{<name>}" and record the new value as
	// the hold's token (Token), as Redisson's RFencedLock does.
	Fencing bool
}

// A Mutex is a distributed reentrant lock. It is cheap to create, does no
// I/O until used, and is safe for concurrent use; any number of Mutex
// values may name the same lock. The zero Mutex is not usable: create one
// with New.
type Mutex struct {
	c        *core.Client
	name     string
	channel  string // redisson_lock__channel:{<name>}
	tokenKey string // redisson_lock_token:{<name>}
	opts     Options
	err      error // bad input to New, returned by every method
}

var _ relock.Locker = (*Mutex)(nil)

// New returns the Mutex named name on rc. Bad input (a nil client, an
// invalid name, a negative lease) is not reported here but by every
// method of the returned Mutex.
func New(rc *relock.Client, name string, opts *Options) *Mutex {
	m := &Mutex{
		c:        core.Of(rc),
		name:     name,
		channel:  core.Prefix("redisson_lock__channel", name),
		tokenKey: core.Prefix("redisson_lock_token", name),
	}
	if opts != nil {
		m.opts = *opts
	}
	switch {
	case m.c == nil:
		m.err = fmt.Errorf("reentrant: nil client: %w", relock.ErrInvalidArgument)
	case m.opts.Lease < 0 || (m.opts.Lease > 0 && m.opts.Lease < time.Millisecond):
		m.err = fmt.Errorf("reentrant: lease %v: %w", m.opts.Lease, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			m.err = fmt.Errorf("reentrant: %w", err)
		}
	}
	return m
}

// Name returns the lock's name, which is its Redis key.
func (m *Mutex) Name() string { return m.name }

// check returns the Mutex's input error or relock.ErrClosed.
func (m *Mutex) check() error {
	if m.err != nil {
		return m.err
	}
	return m.c.Check()
}

func (m *Mutex) lease() time.Duration {
	if m.opts.Lease > 0 {
		return m.opts.Lease
	}
	return m.c.WatchdogTimeout
}

func (m *Mutex) key(owner int64) core.HoldKey {
	return core.HoldKey{Name: m.name, Field: m.c.Field(owner)}
}

// Lock waits until ctx's owner holds the lock, or ctx ends. When ctx
// carries no owner a fresh one is created. The returned context is a
// child of ctx carrying the owner: pass it to nested Lock calls, to
// Unlock, and to the work the lock protects. It is cancelled with cause
// relock.ErrLockLost if the lease is lost, has a deadline at the lease's
// end with a fixed lease, and is cancelled by the Unlock that releases
// the last hold.
//
// If ctx ends first, Lock returns an error matching both
// relock.ErrNotAcquired and ctx.Err(), and leaves nothing in Redis.
func (m *Mutex) Lock(ctx context.Context) (context.Context, error) {
	return m.lock(ctx, -1)
}

// TryLock is Lock waiting at most wait; 0 means one attempt. It returns
// an error matching relock.ErrNotAcquired when it gives up.
func (m *Mutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if wait < 0 {
		return nil, fmt.Errorf("reentrant: negative wait %v: %w", wait, relock.ErrInvalidArgument)
	}
	return m.lock(ctx, wait)
}

func (m *Mutex) lock(ctx context.Context, bound time.Duration) (context.Context, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	ctx, owner := core.EnsureOwner(ctx)
	key := m.key(owner)
	var grant core.Grant
	err := wait.Acquire(ctx, wait.Spec{
		Hub:     m.c.Hub,
		Channel: m.channel,
		Wait:    bound,
		Attempt: func() (time.Duration, bool, error) {
			g, ttl, ok, err := m.acquire(ctx, key)
			grant = g
			return ttl, ok, err
		},
	})
	if err != nil {
		return nil, fmt.Errorf("reentrant: lock %q: %w", m.name, err)
	}
	lctx, err := m.c.Granted(ctx, key, grant)
	if err != nil {
		m.abandon(ctx, key)
		return nil, fmt.Errorf("reentrant: lock %q: %w", m.name, err)
	}
	return lctx, nil
}

// acquire runs the acquire script once, on a context that the caller's
// cancellation cannot cut short: a reply lost to cancellation would leave
// a lock nobody knows it holds.
func (m *Mutex) acquire(ctx context.Context, key core.HoldKey) (core.Grant, time.Duration, bool, error) {
	ctx, cancel := core.OpContext(ctx)
	defer cancel()
	lease := core.Millis(m.lease())
	g := core.Grant{
		Sent:  time.Now(),
		Lease: m.opts.Lease,
		Renewal: watchdog.Renewal{
			Script: scripts.Renew,
			Keys:   []string{m.name},
			Args:   []any{core.Millis(m.c.WatchdogTimeout), key.Field},
		},
	}
	var (
		reply any
		err   error
	)
	if m.opts.Fencing {
		reply, err = core.Eval(ctx, m.c.Redis, scripts.FencedAcquire, []string{m.name, m.tokenKey}, lease, key.Field)
	} else {
		reply, err = core.Eval(ctx, m.c.Redis, scripts.Acquire, []string{m.name}, lease, key.Field)
	}
	if err != nil {
		m.abandon(ctx, key)
		return g, 0, false, err
	}
	if !m.opts.Fencing {
		if reply == nil {
			return g, 0, true, nil
		}
		ttl, ok := reply.(int64)
		if !ok {
			return g, 0, false, fmt.Errorf("unexpected acquire reply %v", reply)
		}
		return g, time.Duration(ttl) * time.Millisecond, false, nil
	}
	pair, ok := reply.([]any)
	if !ok || len(pair) != 2 {
		return g, 0, false, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	acquired, _ := pair[0].(int64)
	n, _ := pair[1].(int64)
	if acquired == 1 {
		g.Token = n
		return g, 0, true, nil
	}
	return g, time.Duration(n) * time.Millisecond, false, nil
}

// abandon undoes an acquire whose reply was lost, or that succeeded as
// the client closed. For an owner that held no hold, the acquire either
// failed or left exactly one hold, which a single unlock removes;
// re-entries are left for the lease to end, as their count cannot be told
// apart from holds the owner still uses.
func (m *Mutex) abandon(ctx context.Context, key core.HoldKey) {
	if m.c.Holding(key) {
		return
	}
	// ctx may be the one that just timed out.
	ctx, cancel := core.OpContext(ctx)
	defer cancel()
	_, _ = core.Eval(ctx, m.c.Redis, scripts.Unlock, []string{m.name, m.channel},
		core.Millis(m.lease()), key.Field, m.c.Publish)
}

// Unlock releases one hold of ctx's owner. The last hold deletes the lock
// and wakes a waiter. Unlock uses its own short timeout, not ctx's
// cancellation, so it works with a context that is already done. It
// returns an error matching relock.ErrNotHeld, and changes nothing, when
// ctx's owner holds no hold (never locked, already unlocked, or lost).
func (m *Mutex) Unlock(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	owner, ok := core.OwnerFrom(ctx)
	if !ok {
		return fmt.Errorf("reentrant: unlock %q: context carries no owner: %w", m.name, relock.ErrNotHeld)
	}
	key := m.key(owner)
	ctx, cancel := core.OpContext(ctx)
	defer cancel()
	reply, err := core.Eval(ctx, m.c.Redis, scripts.Unlock, []string{m.name, m.channel},
		core.Millis(m.lease()), key.Field, m.c.Publish)
	if err != nil {
		return fmt.Errorf("reentrant: unlock %q: %w", m.name, err)
	}
	if reply == nil {
		m.c.Lost(m.name, key.Field)
		return fmt.Errorf("reentrant: unlock %q: %w", m.name, relock.ErrNotHeld)
	}
	n, ok := reply.(int64)
	if !ok {
		return fmt.Errorf("reentrant: unlock %q: unexpected reply %v", m.name, reply)
	}
	m.c.Released(key, n == 0)
	return nil
}

// ForceUnlock deletes the lock whoever holds it and wakes a waiter. It
// reports whether there was a lock to delete. Holders on this client see
// their contexts cancelled with relock.ErrLockLost at once; holders
// elsewhere, at their watchdog's next renewal.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	if err := m.check(); err != nil {
		return false, err
	}
	reply, err := core.Eval(ctx, m.c.Redis, scripts.ForceUnlock, []string{m.name, m.channel}, m.c.Publish)
	if err != nil {
		return false, fmt.Errorf("reentrant: force unlock %q: %w", m.name, err)
	}
	// Local holds end even when there was nothing to delete: the lock
	// they recorded has already expired.
	m.c.Lost(m.name, "")
	n, _ := reply.(int64)
	return n == 1, nil
}

// Token returns the fencing token of ctx's owner's current hold: the
// value the acquire of its latest Lock drew. It needs Options.Fencing and
// does no I/O.
func (m *Mutex) Token(ctx context.Context) (int64, error) {
	if err := m.check(); err != nil {
		return 0, err
	}
	if !m.opts.Fencing {
		return 0, fmt.Errorf("reentrant: %q has no fencing token without Options.Fencing: %w", m.name, relock.ErrInvalidArgument)
	}
	owner, ok := core.OwnerFrom(ctx)
	if !ok {
		return 0, fmt.Errorf("reentrant: token of %q: %w", m.name, relock.ErrNotHeld)
	}
	token, ok := m.c.Token(m.key(owner))
	if !ok {
		return 0, fmt.Errorf("reentrant: token of %q: %w", m.name, relock.ErrNotHeld)
	}
	return token, nil
}
