package hashlock

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/observe"
)

// A Lock is one lock of a hash-record type. A lock type keeps it in its
// own value (Init), so that making a lock is one allocation.
type Lock struct {
	C      *core.Client
	Client *relock.Client // the user's handle on C
	Name   string
	// Display is the name errors and the Observer give the lock, when
	// it is not Name: a grouplock set's Name is the local name of its
	// holds, "<group>[<hash>]", and its Display the group, its Redis
	// key. Empty means Name.
	Display string
	Pkg     string        // error prefix: the lock package's name
	Lease   time.Duration // fixed lease; 0 means the watchdog renews
	// Kind names the lock to the Observer, and Op and TryOp its Lock
	// calls that wait until ctx ends and those bounded: Init sets Pkg,
	// observe.OpLock and OpTryLock, and an election's lock is told as
	// "election", with Campaign and TryCampaign.
	Kind      string
	Op, TryOp observe.Op
	// Grants tells that a release may hand the lock to the waiter it
	// wakes: a tagged wake-up "<tag>:<lease ms>" then means "you hold
	// it", and "<tag>:0" only "try". Without it, a tagged wake-up only
	// tells the waiter to try.
	Grants bool
	// Field maps an owner's "<client id>:<owner>" to the hash field of
	// its holds (a writer's ":write" suffix); nil keeps it.
	Field func(owner string) string
	// MaxSleep caps each sleep between attempts (a fair waiter's score
	// refresh); 0 means no cap.
	MaxSleep time.Duration
	Err      error // bad input found by Init, returned by every method

	// Gone is relock's record of the lock's given-up attempts
	// (layout.LockGone): the acquire scripts' last KEY. GoneDue is its
	// index of when entries may go (layout.LockGoneDue), which only Bury
	// reads. Each entry lasts the lease a late attempt would set
	// (LeaseMillis).
	Gone, GoneDue string

	// renewed is the lease the watchdog renews when Lease is 0, if the
	// lock has one of its own (SetRenewed); 0 for the client's
	// WatchdogTimeout.
	renewed time.Duration

	// ops are the lock type's scripts (Listen or Poll). channels is the
	// same value when waits listen, and nil when they poll with poll.
	ops      Ops
	channels Channeler
	poll     wait.Backoff

	// Arguments made once, so that each call boxes no new value.
	leaseArg  any       // LeaseMillis
	renewArg  any       // the renewed lease in ms
	renewKeys [1]string // the default renewal's KEYS: Name

	// taken: the last Lock call through this value found the lock
	// taken, so the next one looks for a live channel to join before
	// its first attempt (wait.Spec.LikelyFree). A hint that costs
	// nothing but, when wrong, a hub lookup or a second attempt; any
	// number of calls read and write it at once.
	taken atomic.Bool
}

// Init validates a lock's inputs and sets l up without Ops, which the
// caller then gives with Listen or Poll. Bad input is recorded in Err,
// not returned.
func (l *Lock) Init(pkg string, rc *relock.Client, name string, lease time.Duration) {
	*l = Lock{C: core.Of(rc), Client: rc, Name: name, Pkg: pkg, Kind: pkg, Op: observe.OpLock, TryOp: observe.OpTryLock,
		Lease: lease, renewKeys: [1]string{name},
		Gone: layout.LockGone(name), GoneDue: layout.LockGoneDue(name)}
	switch {
	case l.C == nil:
		l.Err = fmt.Errorf("%s: nil client: %w", pkg, relock.ErrInvalidArgument)
	case !core.ValidMillis(lease):
		l.Err = fmt.Errorf("%s: lease %v: %w", pkg, lease, relock.ErrInvalidArgument)
	default:
		if err := core.ValidateName(name); err != nil {
			l.Err = fmt.Errorf("%s: %w", pkg, err)
		}
	}
	switch {
	case l.C == nil:
	case lease > 0:
		l.leaseArg, l.renewArg = transport.Millis(lease), l.C.WatchdogArg
	default:
		l.leaseArg, l.renewArg = l.C.WatchdogArg, l.C.WatchdogArg
	}
}

// Nil returns the Lock of a nil *typ, a lock type of package pkg, which
// its methods use in place of their own: every operation returns
// core.NilReceiver's error; Name is empty, Client nil. It does no I/O
// and is never changed.
func Nil(pkg, typ string) *Lock {
	return &Lock{Pkg: pkg, Err: core.NilReceiver(pkg, typ)}
}

// Listen gives l its lock type's scripts, whose waits listen for
// wake-ups on the channels ops names. Call it, or Poll, after Init.
func (l *Lock) Listen(ops Listener) { l.ops, l.channels = ops, ops }

// Poll gives l its lock type's scripts, whose waits poll with backoff
// instead of listening (Redisson's spin lock, whose releases publish
// nothing): they never subscribe, a Foreigner's channel goes unheard,
// and no wake-up hands the lock over, so that Grants only picks the
// attempts' modes. Call it, or Listen, after Init.
func (l *Lock) Poll(ops Ops, backoff wait.Backoff) { l.ops, l.poll = ops, backoff }

// SetRenewed gives a lock without a fixed Lease a renewed lease of its
// own, d in whole ms, in place of the client's WatchdogTimeout: its
// acquires set it, and the client's watchdog renews it every d/3 and
// reports it lost in proportion (renew.Renewal.Timeout). The caller
// has checked d (at least relock.MinWatchdogTimeout). Call it after Init.
func (l *Lock) SetRenewed(d time.Duration) {
	if l.C == nil || l.Lease > 0 {
		return
	}
	l.renewed = d.Truncate(time.Millisecond)
	l.leaseArg = transport.Millis(l.renewed)
	l.renewArg = l.leaseArg
}

// Check returns the lock's input error, or core.Client.Check's.
func (l *Lock) Check(ctx context.Context) error {
	if l.Err != nil {
		return l.Err
	}
	return l.C.Check(ctx)
}

// Begin is Check for an operation that runs scripts (see
// core.Client.Begin).
func (l *Lock) Begin(ctx context.Context) (end func(), err error) {
	if l.Err != nil {
		return nil, l.Err
	}
	return l.C.Begin(ctx)
}

// LeaseArg is LeaseMillis as a script argument.
func (l *Lock) LeaseArg() any { return l.leaseArg }

// LeaseMillis is the lease every acquire and unlock sets, in ms.
func (l *Lock) LeaseMillis() int64 {
	switch {
	case l.Lease > 0:
		return transport.Millis(l.Lease)
	case l.renewed > 0:
		return transport.Millis(l.renewed)
	}
	return transport.Millis(l.C.WatchdogTimeout)
}

// Key is the hold record of ctx's owner, if ctx carries one.
func (l *Lock) Key(ctx context.Context) (core.HoldKey, bool) {
	key, _, ok := l.owner(ctx)
	return key, ok
}

// owner is Key and the owner's Field.
func (l *Lock) owner(ctx context.Context) (core.HoldKey, Field, bool) {
	field, arg, ok := l.C.FieldFrom(ctx)
	if !ok {
		return core.HoldKey{}, Field{}, false
	}
	if l.Field != nil {
		field = l.Field(field)
		arg = field
	}
	return core.HoldKey{Name: l.Name, Field: field}, Field{Name: field, Arg: arg}, true
}

// shown is the lock's name in errors and Observer events: Display, or
// Name.
func (l *Lock) shown() string {
	if l.Display != "" {
		return l.Display
	}
	return l.Name
}

func (l *Lock) errorf(op string, err error) error {
	return fmt.Errorf("%s: %s %q: %w", l.Pkg, op, l.shown(), err)
}
