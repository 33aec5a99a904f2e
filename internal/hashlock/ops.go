package hashlock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/renew"
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
	// never succeed (a read-to-write upgrade, a non-reentrant lock's
	// owner asking again).
	Refused error
	// Foreign reports that a holder or waiter ahead of the caller is not
	// a relock client: it wakes the caller on Foreigner's channel.
	Foreign bool
	// Late reports that the attempt changed nothing because a give-up
	// of the owner's was recorded with a number at least the attempt's
	// (core.Client.Bury): another call of the same owner gave up an
	// attempt sent after this one. The caller tries again at once, with
	// a new number.
	Late bool
}

// NoTTLSleep bounds a registered waiter's sleep on a lock whose record
// has no TTL (written so by another program): relock's registry of the
// lock's waiters (waiters_prelude.lua) then lives 5 s past its latest
// registration, and each attempt registers the waiter again.
const NoTTLSleep = 2 * time.Second

// Registered is the Sleep of a registered waiter that found the lock
// taken with ttl ms left: the lock's TTL, or NoTTLSleep when it has
// none.
func Registered(ttl int64) time.Duration {
	if ttl < 0 {
		return NoTTLSleep
	}
	return time.Duration(ttl) * time.Millisecond
}

// LateReply is what every acquire script replies to a late attempt.
const LateReply = int64(0)

// PTTL reads the {pttl} that an acquire script of a lock type without
// waiters of its own (spin, read/write) replies when the lock is taken:
// the lock's PTTL in ms, which bounds the wait for it (-1: no expiry).
// It reads LateReply too.
func PTTL(reply any) (Result, error) {
	if reply == LateReply {
		return Result{Late: true}, nil
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 1 {
		return Result{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	ttl, _ := r[0].(int64)
	return Result{Sleep: time.Duration(ttl) * time.Millisecond}, nil
}

// A Mode tells an acquire script what the caller wants of it.
type Mode string

// The modes, as the scripts take them (fair_acquire.lua's ARGV[4]).
const (
	// Try takes the lock if that can be done at once, and leaves
	// nothing behind.
	Try Mode = "0"
	// Join takes or re-enters the lock, or queues for it.
	Join Mode = "1"
	// Queued is Join for an owner that holds nothing on its client: a
	// hold of its in Redis was handed to one of its calls (a grant not
	// yet recorded), and counts as it is.
	Queued Mode = "2"
	// Claim is Try for an owner that holds nothing on its client,
	// taking a hold of its in Redis as Queued does.
	Claim Mode = "3"
)

// Arg is m as a script argument, boxed without allocating.
func (m Mode) Arg() any {
	switch m {
	case Try:
		return string(Try)
	case Queued:
		return string(Queued)
	case Claim:
		return string(Claim)
	}
	return string(Join)
}

// Ops are the scripts of one lock type, each run once per call. A lock type
// implements them on its own lock value, converted to a type that keeps
// them out of its API: a lock then costs no closure per operation. It
// hands them to its Lock with Lock.Listen (a Listener: Ops and the
// Channeler its waits listen with) or Lock.Poll, and its Forcer to each
// Lock.ForceUnlock, so that the compiler checks every interface a lock
// type must implement; the optional ones (GiveUpper, Foreigner, Renewer)
// are found by type assertion.
//
// Acquire runs under the Lock call's own context (bounded by
// core.Client.OpContext), which the caller's cancellation may cut short
// (a pool wait, a dial): an attempt whose reply is lost is undone
// (Lock.abandon). Unlock runs under a context that the cancellation of
// the call it serves cannot cut short (core.Client.CleanupContext, or a
// background one for an undo: core.Client.Settle, Detach), but for
// Lock.Release's, which Client.Shutdown's context bounds.
type Ops interface {
	// Acquire tries once for f, as mode asks. attempt is the attempt's
	// number (core.Client.BeginAttempt), to send with Lock.Gone: the
	// acquire script changes nothing, and replies LateReply, when a
	// give-up recorded a number at least attempt's.
	Acquire(ctx context.Context, f Field, mode Mode, attempt int64) (Result, error)
	// Unlock releases one hold of f through rdb: reply nil when it
	// holds none, 0 when holds remain, 1 when the lock was released.
	// last tells that the owner knows of one hold only: the script may
	// remove the field without reading its count.
	Unlock(ctx context.Context, rdb redis.Scripter, f Field, last bool) (any, error)
}

// A Listener is the Ops of a lock type whose waits listen for wake-ups
// (Lock.Listen): every type but one that polls.
type Listener interface {
	Ops
	Channeler
}

// A Channeler names the channel on which field's waits are woken, and
// the waiter's tag there ("" for none): a message "<tag>:<lease ms>"
// hands it the lock (a fair lock's grant).
type Channeler interface {
	Channel(field string) (channel, tag string)
}

// A Forcer deletes the lock and replies the holders it deleted, as
// transport.Forced reads it (Lock.ForceUnlock).
type Forcer interface {
	ForceUnlock(ctx context.Context) (any, error)
}

// Optional Ops.
type (
	// A GiveUpper undoes what failed attempts left in Redis, if
	// anything (a fair lock's queue entry, or a grant not taken);
	// holding tells whether the owner holds the lock on this client.
	// Ops without it leave nothing behind a failed attempt. GiveUp
	// runs within core.Grace of the caller's end, and then in the
	// background (core.Client.Settle).
	GiveUpper interface {
		GiveUp(ctx context.Context, f Field, holding bool) error
	}
	// A Foreigner names the channel on which clients other than relock
	// wake field's waits, when Result.Foreign says one may.
	Foreigner interface {
		Foreign(field string) string
	}
	// A Renewer makes the watchdog's renewal of field's holds. Ops
	// without it renew the hash while field exists.
	Renewer interface {
		Renewal(f Field) renew.Renewal
	}
)

// Tag is a waiter's tag on its client's channel: the owner number that
// ends field, "<client id>:<owner>".
func Tag(field string) string {
	return field[strings.LastIndexByte(field, ':')+1:]
}

// A Field is an owner's hash field (Lock.Field applied): Name, and Arg,
// the same string as a script argument. A string passed as an any is
// copied to the heap; core.Client.FieldFrom makes Arg once an owner, so
// that a Lock, its re-entries and its Unlock send the field without
// allocating.
type Field struct {
	Name string
	Arg  any
}
