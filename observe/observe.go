// Package observe defines what a relock Client tells an Observer about
// its locks: acquires and unlocks as they begin and end, holds as they
// end (and why), the watchdog's renewal rounds, and a Redis master that
// may evict lock keys; and Stats, what a Client can report at any time.
// Set an Observer with relock.Options.Observer; read Stats with
// relock.Client.Stats. The module
// github.com/relock-go/relock/relockotel turns both into OpenTelemetry
// metrics and spans.
//
// An Observer's methods are called synchronously, on the goroutine of the
// event (a caller's Lock, the watchdog's, a background check's), with no
// lock of relock's held. They must be quick and must not block or call
// back into the Client. Without an Observer, relock makes none of these
// calls and builds none of these values.
package observe

import (
	"context"
	"time"
)

// An Observer is told what a Client's locks do. Embed Base to implement
// only some of the methods.
type Observer interface {
	// StartAcquire is called as an acquire begins: a Lock, TryLock,
	// semaphore Acquire, latch Await or election Campaign, op telling
	// which. ctx is the caller's. The context it returns, ctx or a
	// context derived from it (carrying a span, say), is the one the
	// acquire's Redis commands run under, so that a traced Redis client
	// records them as its children; the lock's own context derives from
	// ctx, not from it. The func it returns, unless nil, is called once
	// as the acquire ends.
	StartAcquire(ctx context.Context, l Lock, op Op) (context.Context, func(Acquire))
	// StartUnlock is called as an Unlock (or a semaphore Release)
	// begins. The context it returns is, as StartAcquire's, the one the
	// unlock's Redis commands run under; the func it returns, unless nil,
	// is called once with the unlock's error as it ends.
	StartUnlock(ctx context.Context, l Lock, op Op) (context.Context, func(error))
	// HoldEnded is called when an owner's last hold on a lock ends,
	// after the hold's contexts were cancelled (a lost lease is told to
	// the holder first).
	HoldEnded(HoldEnd)
	// WatchdogRound is called after each renewal batch of the Client's
	// watchdog (see Round).
	WatchdogRound(Round)
	// MayEvict is called at most once for each Redis master the Client
	// sends acquires to, when it finds that the master may evict keys
	// under memory pressure (maxmemory set, maxmemory-policy not
	// noeviction) or that its settings cannot be read (Eviction.Err);
	// never for a master that does not evict. An evicted lock key lets a
	// second holder in, until the first learns at its next renewal. It
	// is called on the goroutine that read the settings ("Memory and
	// eviction" in docs/operations.md says when).
	MayEvict(Eviction)
}

// An Op is the method an acquire or an unlock was called as. Lock
// types share the names: a read lock's RLock is a Lock of kind
// "rwlock", a MultiLock's TryLock a TryLock of kind "multilock".
type Op string

// The operations.
const (
	OpLock        Op = "Lock"        // waits until held or ctx ends
	OpTryLock     Op = "TryLock"     // waits at most a bound
	OpAcquire     Op = "Acquire"     // a semaphore's or permits' permit
	OpTryAcquire  Op = "TryAcquire"  // a permit, waiting at most a bound
	OpAwait       Op = "Await"       // a latch's opening
	OpTryAwait    Op = "TryAwait"    // a latch's opening, waiting at most a bound
	OpCampaign    Op = "Campaign"    // an election's leadership
	OpTryCampaign Op = "TryCampaign" // a leadership, waiting at most a bound
	OpUnlock      Op = "Unlock"      // a lock's Unlock (RUnlock too), an election's Resign
	OpRelease     Op = "Release"     // a semaphore's or permits' Release
)

// Lock names what an event is about.
type Lock struct {
	// Kind is the lock's package: "reentrant", "fair", "rwlock",
	// "spinlock", "nonreentrant", "grouplock", "semaphore", "latch",
	// "permits", "multilock", "redlock", "election".
	Kind string
	// Name is the lock's name: its Redis key.
	Name string
}

// An Outcome is how an acquire ended.
type Outcome int

const (
	// Acquired: the caller holds the lock (or the latch opened).
	Acquired Outcome = iota
	// NotAcquired: the wait bound ran out or the caller's context ended.
	NotAcquired
	// Closed: the Client closed.
	Closed
	// Failed: Redis answered with an error, or could not be reached, or
	// the input was bad.
	Failed
)

// String returns "acquired", "not_acquired", "closed" or "failed".
func (o Outcome) String() string {
	switch o {
	case Acquired:
		return "acquired"
	case NotAcquired:
		return "not_acquired"
	case Closed:
		return "closed"
	}
	return "failed"
}

// Acquire is how an acquire ended.
type Acquire struct {
	Outcome Outcome
	// Wait is the time from the call to its end.
	Wait time.Duration
	// Attempts counts the scripts the acquire ran (1 when the lock was
	// free; each wake-up or retry adds one). 0 when none ran, as when the
	// input was bad.
	Attempts int
	// Err is the acquire's error, nil when Outcome is Acquired.
	Err error
}

// HoldEnd is an owner's last hold on a lock ending.
type HoldEnd struct {
	Lock
	// Held is the time from the first acquire of the hold to its end.
	Held time.Duration
	// Cause is nil when the hold was unlocked, and matches
	// relock.ErrUnlocked when it was unlocked but Redis did not confirm
	// the release (it goes on in the background, bounded by the lease);
	// otherwise it matches relock.ErrLockLost (the lease was lost or ran
	// out: the lock may be someone else's now) or relock.ErrClosed (the
	// Client closed). A cause matching relock.ErrLeaked, an ErrLockLost,
	// is a forgotten Unlock: every context the hold returned became
	// unreachable, and its renewal stopped.
	Cause error
}

// Round is one renewal batch of a Client's watchdog: a pipeline of at
// most relock.Options.WatchdogBatchSize renewals. A Client holding more
// leases renews them in several batches an interval.
type Round struct {
	Leases   int           // leases the round renewed or tried to
	Failures int           // renewals that got no answer (retried soon)
	Lost     int           // leases the round found gone
	Duration time.Duration // from sending the round to its answers
}

// Eviction is what a Client found of a master's eviction settings.
type Eviction struct {
	// Addr is the master's address on a cluster; "" on a client of one
	// server or a failover client.
	Addr string
	// MaxMemory is the master's maxmemory in bytes, 0 when Err is set.
	MaxMemory int64
	// Policy is its maxmemory-policy ("volatile-lru", "allkeys-lru",
	// ...), "" when Err is set.
	Policy string
	// Err is why the settings could not be read: the server refused
	// INFO (an ACL user without it). Nil when they were read.
	Err error
}

// Stats is what a Client reports at any time.
type Stats struct {
	Holds    int // owners' holds, one per owner and lock
	Waiters  int // acquires waiting on the Client's subscriptions (a spin lock's polling waiters are not counted)
	Channels int // channels the Client is subscribed to for waiters, and lingering ones (not its own for force-unlock notices)
}

// Base implements Observer with methods that do nothing, for embedding.
type Base struct{}

// StartAcquire returns ctx and nil.
func (Base) StartAcquire(ctx context.Context, _ Lock, _ Op) (context.Context, func(Acquire)) {
	return ctx, nil
}

// StartUnlock returns ctx and nil.
func (Base) StartUnlock(ctx context.Context, _ Lock, _ Op) (context.Context, func(error)) {
	return ctx, nil
}

// HoldEnded does nothing.
func (Base) HoldEnded(HoldEnd) {}

// WatchdogRound does nothing.
func (Base) WatchdogRound(Round) {}

// MayEvict does nothing.
func (Base) MayEvict(Eviction) {}
