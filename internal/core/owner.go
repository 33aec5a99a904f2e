package core

import (
	"context"
	"sync/atomic"
)

// Owners are process-wide: a context carries one int64 and every Client
// turns it into the hash field "<client id>:<owner>", Redisson's
// "<uuid>:<threadId>" shape. Numbering starts at 1 so that a zero value is
// never a valid owner.
var lastOwner atomic.Int64

type ownerKey struct{}

// OwnerFrom returns the owner carried by ctx, if any.
func OwnerFrom(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(ownerKey{}).(int64)
	return id, ok
}

// EnsureOwner returns ctx and its owner, or, when ctx carries none, a child
// of ctx carrying a fresh owner.
func EnsureOwner(ctx context.Context) (context.Context, int64) {
	if id, ok := OwnerFrom(ctx); ok {
		return ctx, id
	}
	return WithNewOwner(ctx)
}

// WithNewOwner returns a child of ctx carrying a fresh owner.
func WithNewOwner(ctx context.Context) (context.Context, int64) {
	id := lastOwner.Add(1)
	return context.WithValue(ctx, ownerKey{}, id), id
}
