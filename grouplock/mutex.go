package grouplock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// zz_methods.go has the methods every hash-lock facade shares, written
// from one template (internal/facadegen).
//
//go:generate go run ../internal/facadegen

// Options configure a Mutex. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Lease is a fixed lease: the values are freed Lease after each
	// acquire unless unlocked first, and nothing renews them. Zero (the
	// default) lets the client's watchdog renew the lease while they are
	// held. Redis keeps milliseconds: a Lease below 1ms is invalid.
	Lease time.Duration

	// Codec is the codec of the Redisson clients that lock the same
	// values (their Config.setCodec): it decides each value's field.
	// The default, Kryo5Codec, is Redisson's default.
	Codec Codec
}

// A Mutex locks a set of values of one group, all of them or none, in
// one script call. It is cheap to create, does no I/O until used, and is
// safe for concurrent use; any number of Mutex values may name the same
// group and values. The zero Mutex is not usable: create one with New.
// A zero value's methods return an error matching relock.ErrInvalidArgument,
// and so do a nil pointer's, whose accessors return zero values (Name "").
type Mutex struct {
	l     hashlock.Lock
	group string
	// keys are the group's hash and its channel
	// (redisson_lock__channel:{<group>}), the KEYS of the release
	// scripts, and the record of given-up attempts on the group
	// (hashlock.Lock.Gone), the acquire's second; keyArgs holds them as
	// script arguments (transport.Call).
	keys    [3]string
	keyArgs [3]any
	// acquireKeys and acquireKeyArgs are the acquire's KEYS.
	acquireKeys    [2]string
	acquireKeyArgs [2]any
	// fields are the values' fields in sorted order, boxed once for
	// every call's ARGV.
	fields                  []any
	acquireCall, unlockCall transport.Call
}

// ops are a Mutex's hashlock.Ops (scripts.go).
type ops Mutex

// New returns the Mutex over values of group on rc. Bad input (a nil
// client, an invalid group name, no values, an empty or duplicate value,
// one that is not valid UTF-8, a negative lease, an unknown codec) is not
// reported here but by every method of the returned Mutex, as an error
// matching relock.ErrInvalidArgument.
func New(rc *relock.Client, group string, values []string, opts *Options) *Mutex {
	var o Options
	if opts != nil {
		o = *opts
	}
	m := &Mutex{group: group}
	fields, err := fieldsOf(group, values, o.Codec)
	// The local hold records (and force-unlock notices) are keyed by a
	// name of the set, not the group: an owner may hold several sets of
	// one group at once, and each is renewed and released on its own.
	// Errors and the Observer name the group (Display).
	name := group
	if err == nil {
		name = group + "[" + StringCodec.Field(strings.Join(fields, ",")) + "]"
	}
	m.l.Init("grouplock", rc, name, o.Lease)
	m.l.Display = group
	if err != nil {
		m.l.Err = err
	}
	// Attempts are given up on the group, whose slot the record must
	// share, not on the set's name.
	m.l.Gone, m.l.GoneDue = layout.LockGone(group), layout.LockGoneDue(group)
	m.keys = [3]string{group, layout.GroupLockChannel(group), m.l.Gone}
	keyArgs := transport.KeyArgs(m.keyArgs[:], m.keys[:]...)
	m.fields = make([]any, len(fields))
	for i, f := range fields {
		m.fields[i] = f
	}
	m.acquireKeys, m.acquireKeyArgs = [2]string{m.keys[0], m.keys[2]}, [2]any{keyArgs[0], keyArgs[2]}
	m.acquireCall.Bind(lua.GroupAcquire(), m.acquireKeys[:], m.acquireKeyArgs[:])
	m.unlockCall.Bind(lua.GroupUnlock(), m.keys[:2], keyArgs[:2])
	m.l.Listen((*ops)(m))
	return m
}

// fieldsOf validates group and values and returns the values' fields,
// sorted.
func fieldsOf(group string, values []string, c Codec) ([]string, error) {
	if err := core.ValidateName(group); err != nil {
		return nil, fmt.Errorf("grouplock: group: %w: %w", relock.ErrInvalidArgument, err)
	}
	if len(values) == 0 {
		return nil, fmt.Errorf("grouplock: no values: %w", relock.ErrInvalidArgument)
	}
	seen := make(map[string]bool, len(values))
	fields := make([]string, 0, len(values))
	for _, v := range values {
		if err := c.check(v); err != nil {
			return nil, err
		}
		if seen[v] {
			return nil, fmt.Errorf("grouplock: value %q appears twice: %w", v, relock.ErrInvalidArgument)
		}
		seen[v] = true
		fields = append(fields, c.Field(v))
	}
	slices.Sort(fields)
	return fields, nil
}

// Name returns the group's name as given to New, which is its Redis key
// and the name in the Mutex's errors and Observer events.
func (m *Mutex) Name() string {
	if m == nil {
		return ""
	}
	return m.group
}

// Unlock releases one hold of every value for ctx's owner. A value whose
// last hold goes is freed, and the group's waiters are woken. Unlock
// returns by ctx's deadline, and still runs when ctx is done already,
// within relock.CleanupGrace. It returns an error matching
// relock.ErrNotHeld when ctx's owner did not hold every value (never
// locked, already unlocked, or lost); the values it did hold lose a hold
// all the same.
func (m *Mutex) Unlock(ctx context.Context) error { return m.base().Unlock(ctx) }

// ForceUnlock frees every value whoever holds it and wakes the group's
// waiters. It reports whether any value was held. The holders' lock
// contexts are cancelled with cause relock.ErrLockLost: on this client at
// once; on other relock clients holding this same set within
// milliseconds (a notice on their channel), and those holding other sets
// with some of these values at their next renewal.
func (m *Mutex) ForceUnlock(ctx context.Context) (bool, error) {
	return m.base().ForceUnlock(ctx, (*ops)(m))
}

// IsLocked reports whether anyone holds any of the values.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	n, err := m.held(ctx, "")
	return n > 0, err
}

// IsHeld reports whether ctx's owner holds every value, as Redis sees it.
func (m *Mutex) IsHeld(ctx context.Context) (bool, error) {
	if err := m.base().Check(ctx); err != nil {
		return false, err
	}
	owner, _, ok := m.base().C.FieldFrom(ctx)
	if !ok {
		return false, nil
	}
	n, err := m.held(ctx, owner)
	return n == len(m.fields), err
}

// held counts the values held by owner ("" for anyone).
func (m *Mutex) held(ctx context.Context, owner string) (int, error) {
	if err := m.base().Check(ctx); err != nil {
		return 0, err
	}
	args := append(make([]any, 0, 1+len(m.fields)), owner)
	reply, err := transport.Eval(ctx, m.base().C.Redis, lua.GroupHeld(), m.keys[:1], append(args, m.fields...)...)
	if err != nil {
		return 0, fmt.Errorf("grouplock: %q: %w", m.group, err)
	}
	n, _ := reply.(int64)
	return int(n), nil
}
