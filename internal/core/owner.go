package core

import (
	"context"
	"sync"
	"sync/atomic"
)

// Owners are process-wide: a context carries one int64 and every Client
// turns it into the hash field "<client id>:<owner>", Redisson's
// "<uuid>:<threadId>" shape. Numbering starts at 1 so that a zero value is
// never a valid owner.
var lastOwner atomic.Int64

type ownerKey struct{}

// An owner is what a context carries: the owner number and, for the
// first client that asks (most owners use one), its hash field there,
// also boxed as a script argument, so that a Lock and its Unlock build
// and box the field once between them.
type owner struct {
	id    int64
	once  sync.Once
	on    *Client // the client field is cached for
	field string
	arg   any // field
	// track counts the lock contexts that carry the owner, for an
	// owner that a Lock call made (LockOwner); see leak.go.
	track tracker
}

// OwnerFrom returns the owner carried by ctx, if any.
func OwnerFrom(ctx context.Context) (int64, bool) {
	o, ok := ctx.Value(ownerKey{}).(*owner)
	if !ok {
		return 0, false
	}
	return o.id, true
}

// FieldFrom returns the hash field on c of the owner ctx carries, and
// the field as a script argument.
func (c *Client) FieldFrom(ctx context.Context) (field string, arg any, ok bool) {
	o, ok := ctx.Value(ownerKey{}).(*owner)
	if !ok {
		return "", nil, false
	}
	o.once.Do(func() { o.on, o.field = c, c.Field(o.id); o.arg = o.field })
	if o.on == c {
		return o.field, o.arg, true
	}
	field = c.Field(o.id)
	return field, field, true
}

// EnsureOwner returns ctx and its owner, or, when ctx carries none, a child
// of ctx carrying a fresh owner.
func EnsureOwner(ctx context.Context) (context.Context, int64) {
	if id, ok := OwnerFrom(ctx); ok {
		return ctx, id
	}
	return WithNewOwner(ctx)
}

// LockOwner is EnsureOwner for a Lock call, which tracks the owner it
// makes: no context but those its holds return (and their children)
// carries that owner, so once they are all unreachable nobody can unlock
// its holds (leak.go). An owner that ctx carries already, or that
// WithNewOwner made, may be in contexts a caller keeps, and is not
// tracked.
func LockOwner(ctx context.Context) context.Context {
	if _, ok := ctx.Value(ownerKey{}).(*owner); ok {
		return ctx
	}
	o := &owner{id: lastOwner.Add(1)}
	o.track.on = true
	return context.WithValue(ctx, ownerKey{}, o)
}

// WithNewOwner returns a child of ctx carrying a fresh owner.
func WithNewOwner(ctx context.Context) (context.Context, int64) {
	o := &owner{id: lastOwner.Add(1)}
	return context.WithValue(ctx, ownerKey{}, o), o.id
}
