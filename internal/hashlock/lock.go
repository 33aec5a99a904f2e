// Package hashlock is the machinery shared by the lock types whose record
// is Redisson's lock hash (a field "<client id>:<owner>" counting holds,
// the hash's TTL as the lease): the reentrant and the fair mutex. A lock
// package supplies its scripts as Ops; hashlock runs the acquire loop,
// keeps the local hold records, and answers the state queries.
package hashlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/scripts"
	"github.com/relock-go/relock/watchdog"
)

// A Result is the outcome of one acquire attempt.
type Result struct {
	Acquired bool
	Token    int64 // fencing token of the acquire, 0 if none

	// Sleep bounds the wait before the next attempt: the lock's TTL, or
	// negative when it has none (wait for a wake-up).
	Sleep time.Duration
	// Turn reports that the lock is free but another waiter goes first
	// (a fair lock's queue head). The next attempts back off
	// exponentially, bounded by Sleep, until that waiter has taken it.
	Turn bool
	// Refused, when set, ends the wait with this error: the acquire can
	// never succeed (a read-to-write upgrade).
	Refused error
}

// Ops are the scripts of one lock type, each run once per call on a
// context the caller's cancellation cannot cut short.
type Ops struct {
	// Acquire tries once for field; queue false asks it to leave nothing
	// in Redis when it fails (TryLock with no wait).
	Acquire func(ctx context.Context, field string, queue bool) (Result, error)
	// GiveUp undoes what failed attempts left in Redis, if anything (a
	// fair lock's queue entry); nil when they leave nothing.
	GiveUp func(ctx context.Context, field string) error
	// Unlock releases one hold of field through rdb: reply nil when it
	// holds none, 0 when holds remain, 1 when the lock was released.
	Unlock func(ctx context.Context, rdb redis.Scripter, field string) (any, error)
	// ForceUnlock deletes the lock: reply 1 if it existed, else 0. Only
	// Lock.ForceUnlock uses it.
	ForceUnlock func(ctx context.Context) (any, error)
	// Channel is the channel on which field's waits are woken.
	Channel func(field string) string
	// Field maps an owner's "<client id>:<owner>" to the hash field of
	// its holds (a writer's ":write" suffix); nil keeps it.
	Field func(owner string) string
	// Renewal is the watchdog's renewal of field's holds; nil renews the
	// hash while field exists.
	Renewal func(field string) watchdog.Renewal
}

// Backoff bounds for Result.Turn.
const (
	minTurnBackoff = 10 * time.Millisecond
	maxTurnBackoff = 5 * time.Second
)

// A Lock is one lock of a hash-record type.
type Lock struct {
	C      *core.Client
	Client *relock.Client // the user's handle on C
	Name   string
	Pkg    string        // error prefix: the lock package's name
	Lease  time.Duration // fixed lease; 0 means the watchdog renews
	Ops    Ops
	// MaxSleep caps each sleep between attempts (a fair waiter's score
	// refresh); 0 means no cap.
	MaxSleep time.Duration
	Err      error // bad input found by New, returned by every method
}

// New validates a lock's inputs and returns it without Ops; the caller
// fills them in. Bad input is recorded in Err, not returned.
func New(pkg string, rc *relock.Client, name string, lease time.Duration) *Lock {
	l := &Lock{C: core.Of(rc), Client: rc, Name: name, Pkg: pkg, Lease: lease}
	switch {
	case l.C == nil:
		l.Err = fmt.Errorf("%s: nil client: %w", pkg, relock.ErrInvalidArgument)
	case lease < 0 || (lease > 0 && lease < time.Millisecond):
		l.Err = fmt.Errorf("%s: lease %v: %w", pkg, lease, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			l.Err = fmt.Errorf("%s: %w", pkg, err)
		}
	}
	return l
}

// Check returns the lock's input error or relock.ErrClosed.
func (l *Lock) Check() error {
	if l.Err != nil {
		return l.Err
	}
	return l.C.Check()
}

// Begin is Check for an operation that runs scripts (see core.Begin).
func (l *Lock) Begin() (end func(), err error) {
	if l.Err != nil {
		return nil, l.Err
	}
	return l.C.Begin()
}

// LeaseMillis is the lease every acquire and unlock sets, in ms.
func (l *Lock) LeaseMillis() int64 {
	if l.Lease > 0 {
		return core.Millis(l.Lease)
	}
	return core.Millis(l.C.WatchdogTimeout)
}

// Key is the hold record of ctx's owner, if ctx carries one.
func (l *Lock) Key(ctx context.Context) (core.HoldKey, bool) {
	owner, ok := core.OwnerFrom(ctx)
	if !ok {
		return core.HoldKey{}, false
	}
	field := l.C.Field(owner)
	if l.Ops.Field != nil {
		field = l.Ops.Field(field)
	}
	return core.HoldKey{Name: l.Name, Field: field}, true
}

func (l *Lock) errorf(op string, err error) error {
	return fmt.Errorf("%s: %s %q: %w", l.Pkg, op, l.Name, err)
}

// Lock acquires for ctx's owner (a new one if ctx has none), waiting at
// most bound (0: one attempt; negative: until ctx ends).
func (l *Lock) Lock(ctx context.Context, bound time.Duration) (context.Context, error) {
	end, err := l.Begin()
	if err != nil {
		return nil, err
	}
	defer end()
	ctx, _ = core.EnsureOwner(ctx)
	key, _ := l.Key(ctx)
	var grant core.Grant
	backoff := minTurnBackoff
	spec := wait.Spec{
		Hub:      l.C.Hub,
		Channel:  l.Ops.Channel(key.Field),
		Wait:     bound,
		MaxSleep: l.MaxSleep,
		Attempt: func() (time.Duration, bool, error) {
			opctx, cancel := core.OpContext(ctx)
			defer cancel()
			sent := time.Now()
			r, err := l.Ops.Acquire(opctx, key.Field, bound != 0)
			switch {
			case err != nil:
				l.abandon(ctx, key)
				return 0, false, err
			case r.Refused != nil:
				return 0, false, r.Refused
			case r.Acquired:
				grant = core.Grant{Sent: sent, Lease: l.Lease, Renewal: l.renewal(key.Field), Token: r.Token}
				return 0, true, nil
			case r.Turn:
				sleep := backoff
				if r.Sleep >= 0 && r.Sleep < sleep {
					sleep = r.Sleep
				}
				backoff = min(2*backoff, maxTurnBackoff)
				return sleep, false, nil
			}
			backoff = minTurnBackoff
			return r.Sleep, false, nil
		},
	}
	if l.Ops.GiveUp != nil {
		spec.GiveUp = func() error {
			opctx, cancel := core.OpContext(ctx)
			defer cancel()
			return l.Ops.GiveUp(opctx, key.Field)
		}
	}
	if err := wait.Acquire(ctx, spec); err != nil {
		return nil, l.errorf("lock", err)
	}
	lctx, err := l.C.Granted(ctx, key, grant)
	if err != nil {
		l.abandon(ctx, key)
		return nil, l.errorf("lock", err)
	}
	return lctx, nil
}

func (l *Lock) renewal(field string) watchdog.Renewal {
	if l.Ops.Renewal != nil {
		return l.Ops.Renewal(field)
	}
	return watchdog.Renewal{
		Script: scripts.Renew,
		Keys:   []string{l.Name},
		Args:   []any{core.Millis(l.C.WatchdogTimeout), field},
	}
}

// abandon undoes an acquire whose reply was lost, or that succeeded as
// the client closed. For an owner that held no hold, the acquire either
// failed or left exactly one hold, which a single unlock removes;
// re-entries are left for the lease to end, as their count cannot be told
// apart from holds the owner still uses. The unlock goes through the
// acquires' client, which neither retries nor outwaits its deadline: an
// undo is best effort, and one sent to a master that froze must not hold
// the waiter up for go-redis's retries (an unlock sent twice is harmless
// here: the second finds no hold).
func (l *Lock) abandon(ctx context.Context, key core.HoldKey) {
	if l.C.Holding(key) {
		return
	}
	opctx, cancel := core.OpContext(ctx)
	defer cancel()
	_, _ = l.Ops.Unlock(opctx, l.C.Scripts, key.Field)
}

// Unlock releases one hold of ctx's owner.
func (l *Lock) Unlock(ctx context.Context) error {
	end, err := l.Begin()
	if err != nil {
		return err
	}
	defer end()
	key, ok := l.Key(ctx)
	if !ok {
		return l.errorf("unlock", fmt.Errorf("context carries no owner: %w", relock.ErrNotHeld))
	}
	opctx, cancel := core.OpContext(ctx)
	defer cancel()
	reply, err := l.Ops.Unlock(opctx, l.C.Redis, key.Field)
	if err != nil {
		l.C.UnlockFailed(key, err)
		return l.errorf("unlock", err)
	}
	if reply == nil {
		l.C.Lost(l.Name, key.Field)
		return l.errorf("unlock", relock.ErrNotHeld)
	}
	n, ok := reply.(int64)
	if !ok {
		return l.errorf("unlock", fmt.Errorf("unexpected reply %v", reply))
	}
	l.C.Released(key, n == 0)
	return nil
}

// ForceUnlock deletes the lock whoever holds it.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	end, err := l.Begin()
	if err != nil {
		return false, err
	}
	defer end()
	reply, err := l.Ops.ForceUnlock(ctx)
	if err != nil {
		return false, l.errorf("force unlock", err)
	}
	// Local holds end even when there was nothing to delete: the lock
	// they recorded has already expired.
	l.C.Lost(l.Name, "")
	n, _ := reply.(int64)
	return n == 1, nil
}

// Token returns the fencing token of ctx's owner's current hold.
func (l *Lock) Token(ctx context.Context) (int64, error) {
	key, ok := l.Key(ctx)
	if !ok {
		return 0, l.errorf("token of", relock.ErrNotHeld)
	}
	token, ok := l.C.Token(key)
	if !ok {
		return 0, l.errorf("token of", relock.ErrNotHeld)
	}
	return token, nil
}
