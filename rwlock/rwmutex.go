package rwlock

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/transport"
)

// Options configure an RWMutex. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease for every hold, read or write: nothing
	// renews it. Zero (the default) has the client's watchdog renew a
	// lease of the client's WatchdogTimeout while held. A Lease below 1ms
	// is invalid.
	Lease time.Duration
}

// An RWMutex is a distributed read/write lock. It is cheap to create,
// does no I/O until used, and is safe for concurrent use. Create one with
// New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's: its Name is "", its Client nil, its Reader
// and Writer a Side whose every operation returns that error.
type RWMutex struct {
	r, w *Side
	keys []string // lock hash, channel
}

// New returns the RWMutex named name on rc. Bad input (a nil client, an
// invalid name, a negative lease) is not reported here but by every
// method of the returned RWMutex.
func New(rc *relock.Client, name string, opts *Options) *RWMutex {
	var o Options
	if opts != nil {
		o = *opts
	}
	// Every owner's timeout keys start with the lock name's hash tag:
	// "{<name>}", or the name itself when it carries a tag.
	tagged := layout.ReadTimeoutsPrefix(name)
	rw := &RWMutex{keys: []string{name, layout.RWLockChannel(name)}}
	rw.r = newSide(rc, name, o.Lease, "read", rw.keys, tagged)
	rw.w = newSide(rc, name, o.Lease, "write", rw.keys, tagged)
	return rw
}

// reader and writer are rw's sides; a zero Side, whose every method
// reports that New did not make it, for an RWMutex New did not make, and
// nilRWMutex's for a nil rw.
func (rw *RWMutex) reader() *Side {
	switch {
	case rw == nil:
		return nilRWMutex
	case rw.r == nil:
		return new(Side)
	}
	return rw.r
}

func (rw *RWMutex) writer() *Side {
	switch {
	case rw == nil:
		return nilRWMutex
	case rw.w == nil:
		return new(Side)
	}
	return rw.w
}

// nilRWMutex is both sides of a nil *RWMutex: every operation returns an
// error matching relock.ErrInvalidArgument.
var nilRWMutex = &Side{l: hashlock.Lock{Pkg: "rwlock", Err: core.NilReceiver("rwlock", "RWMutex")}}

// Name returns the lock's name, which is its Redis key.
func (rw *RWMutex) Name() string { return rw.writer().Name() }

// Client returns the client the lock was built on; nil for a nil or zero
// RWMutex.
func (rw *RWMutex) Client() *relock.Client { return rw.writer().Client() }

// Reader returns the read side, a relock.Locker whose Lock is RLock.
func (rw *RWMutex) Reader() *Side { return rw.reader() }

// Writer returns the write side, a relock.Locker whose Lock is Lock.
func (rw *RWMutex) Writer() *Side { return rw.writer() }

// RLock waits until ctx's owner holds a read hold, or ctx ends: at once
// when the lock is free or in read mode, or when ctx's owner holds the
// write lock (a downgrade); otherwise once the writer leaves. The
// returned context carries the owner and is cancelled when the read
// holds' lease is lost or the last read hold is released.
func (rw *RWMutex) RLock(ctx context.Context) (context.Context, error) { return rw.reader().Lock(ctx) }

// TryRLock is RLock waiting at most wait; 0 means one attempt.
func (rw *RWMutex) TryRLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return rw.reader().TryLock(ctx, wait)
}

// RUnlock releases one read hold of ctx's owner, or returns an error
// matching relock.ErrNotHeld. Like reentrant.Mutex.Unlock it returns by
// ctx's deadline and still runs, within relock.CleanupGrace, when ctx is
// done already.
func (rw *RWMutex) RUnlock(ctx context.Context) error { return rw.reader().Unlock(ctx) }

// Lock waits until ctx's owner holds the write lock, or ctx ends. If
// ctx's owner holds read holds, Lock returns an error matching
// relock.ErrUpgrade at once. The returned context carries the owner and
// is cancelled when the write lease is lost or the last write hold is
// released.
func (rw *RWMutex) Lock(ctx context.Context) (context.Context, error) { return rw.writer().Lock(ctx) }

// TryLock is Lock waiting at most wait; 0 means one attempt.
func (rw *RWMutex) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return rw.writer().TryLock(ctx, wait)
}

// Unlock releases one write hold of ctx's owner, or returns an error
// matching relock.ErrNotHeld. Like reentrant.Mutex.Unlock it returns by
// ctx's deadline and still runs, within relock.CleanupGrace, when ctx is
// done already.
func (rw *RWMutex) Unlock(ctx context.Context) error { return rw.writer().Unlock(ctx) }

// ForceUnlock deletes the lock in whichever mode, whoever holds it, and
// wakes every waiter. It reports whether there was a lock to delete. Its
// holders' lock contexts, on any relock client, are cancelled with cause
// relock.ErrLockLost within milliseconds (how, and the limits:
// "Force-unlock notices" in docs/wire-layout.md).
func (rw *RWMutex) ForceUnlock(ctx context.Context) (bool, error) {
	return rw.writer().forceUnlock(ctx, "")
}

// A Side is the read or the write side of an RWMutex, as a relock.Locker
// (so a MultiLock can hold a read side) with the state queries of a
// mutex. A zero value's methods, and a nil pointer's (whose Name is "",
// Client nil), return an error matching
// relock.ErrInvalidArgument.
type Side struct {
	l       hashlock.Lock
	mode    string   // "read" or "write"
	keys    []string // lock hash, channel
	tagged  string   // the name's hash-tag prefix of timeout keys
	readers bool
	// writeKeys are the write acquire's KEYS: the lock hash and
	// relock's record of given-up attempts (hashlock.Lock.Gone), made
	// once.
	writeKeys [2]string
}

// ops are a Side's hashlock.Ops (scripts.go).
type ops Side

var _ relock.Locker = (*Side)(nil)

func newSide(rc *relock.Client, name string, lease time.Duration, mode string, keys []string, tagged string) *Side {
	s := &Side{mode: mode, keys: keys, tagged: tagged, readers: mode == "read"}
	s.l.Init("rwlock", rc, name, lease)
	s.writeKeys = [2]string{name, s.l.Gone}
	s.l.Listen((*ops)(s))
	if !s.readers {
		s.l.Field = writerField
	}
	return s
}

func writerField(owner string) string { return owner + ":write" }

// base is the lock s's methods run on: s's own, or for a nil s one
// whose every operation returns an error matching
// relock.ErrInvalidArgument (its Name is empty, its Client nil).
func (s *Side) base() *hashlock.Lock {
	if s == nil {
		return nilSide
	}
	return &s.l
}

// nilSide is the lock of a nil *Side.
var nilSide = hashlock.Nil("rwlock", "Side")

// Name returns the lock's name.
func (s *Side) Name() string { return s.base().Name }

// Client returns the client the lock was built on.
func (s *Side) Client() *relock.Client { return s.base().Client }

// Lock takes a hold on this side; see RWMutex.RLock and RWMutex.Lock.
func (s *Side) Lock(ctx context.Context) (context.Context, error) { return s.base().Lock(ctx, -1) }

// TryLock is Lock waiting at most wait; 0 means one attempt. It returns
// an error matching relock.ErrNotAcquired when it gives up.
func (s *Side) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	return s.base().TryLock(ctx, wait)
}

// Unlock releases one hold of ctx's owner on this side. It runs on ctx's
// values and deadline, not its cancellation (relock.CleanupGrace when ctx
// is done already: see docs/guarantees.md, "Deadlines, call by call"), and
// returns an error matching relock.ErrNotHeld, changing nothing, when
// ctx's owner holds none.
func (s *Side) Unlock(ctx context.Context) error { return s.base().Unlock(ctx) }

// ForceUnlock deletes the lock if it is in this side's mode, whoever
// holds it, and wakes every waiter: the read side's never clears a write
// hold, nor the write side's read holds. It reports whether it deleted
// the lock. Its holders are told as by RWMutex.ForceUnlock.
func (s *Side) ForceUnlock(ctx context.Context) (bool, error) {
	if s == nil {
		return false, nilSide.Err
	}
	return s.forceUnlock(ctx, s.mode)
}

func (s *Side) forceUnlock(ctx context.Context, mode string) (bool, error) {
	end, err := s.base().Begin(ctx)
	if err != nil {
		return false, err
	}
	defer end()
	opctx, cancel := s.base().C.OpContext(ctx)
	defer cancel()
	reply, err := s.forceScript(opctx, mode)
	var fields []string
	var deleted bool
	if err == nil {
		fields, deleted, err = transport.Forced(reply)
	}
	if err != nil {
		return false, fmt.Errorf("rwlock: force unlock %q: %w", s.base().Name, err)
	}
	if deleted {
		// The holders here end at once; other relock clients' are told.
		s.base().C.ForceUnlocked(ctx, s.base().Name, fields)
	}
	return deleted, nil
}

// IsLocked reports whether the lock is held in this side's mode.
func (s *Side) IsLocked(ctx context.Context) (bool, error) {
	if err := s.base().Check(ctx); err != nil {
		return false, err
	}
	mode, _, err := transport.OptionalString(s.base().C.Redis.HGet(ctx, s.base().Name, "mode"))
	if err != nil {
		return false, fmt.Errorf("rwlock: is locked %q: %w", s.base().Name, err)
	}
	return mode == s.mode, nil
}

// IsHeld reports whether ctx's owner holds this side, as Redis sees it.
func (s *Side) IsHeld(ctx context.Context) (bool, error) { return s.base().IsHeld(ctx) }

// HoldCount returns how many holds ctx's owner has on this side.
func (s *Side) HoldCount(ctx context.Context) (int, error) { return s.base().HoldCount(ctx) }

// TTL returns the lock key's time to live, as PTTL reports it (the hash's,
// which the lease sets): 0 when the lock is not held, -1 when it is held
// without expiry.
func (s *Side) TTL(ctx context.Context) (time.Duration, error) { return s.base().TTL(ctx) }
