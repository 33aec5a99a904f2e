package derive

import (
	"context"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// A copy's commands go through the caller's client, so that the hooks the
// caller installed there (tracing, metrics, logging) see them, and come
// back to the copy to be sent: its settings, not the caller's, decide
// retries and deadlines. Two hooks do it:
//
//   - forwarder, on the copy, sends each command (or pipeline) through
//     the original client with a context carrying the rest of the copy's
//     hook chain;
//   - router, added to the original last, so inside the caller's hooks,
//     hands a command whose context carries such a chain to it instead
//     of the original's own processing (where its retries live).
//
// The caller's own commands carry no chain and pass the router untouched.
// Hooks the caller adds to the original after the copy is made sit inside
// the router and do not see the copy's commands.

// processKey and pipelineKey are the context keys of the rest of a copy's
// chain for a command and for a pipeline.
type (
	processKey  struct{}
	pipelineKey struct{}
)

// forward makes orig's hooks see the commands of cp, a copy of it.
func forward(orig, cp redis.UniversalClient) {
	f := &forwards{}
	orig.AddHook(router{f})
	cp.AddHook(forwarder{orig: orig, f: f})
}

// forwards counts the commands and pipelines of one copy under way
// through the original, so that its router looks for a chain in a
// command's context (which can allocate, walking a context.WithoutCancel)
// only while there may be one.
type forwards struct{ n atomic.Int64 }

// forwarder is the copy's hook.
type forwarder struct {
	orig redis.UniversalClient
	f    *forwards
}

func (forwarder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (fw forwarder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		fw.f.n.Add(1)
		defer fw.f.n.Add(-1)
		return fw.orig.Process(context.WithValue(ctx, processKey{}, next), cmd)
	}
}

func (fw forwarder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		fw.f.n.Add(1)
		defer fw.f.n.Add(-1)
		ctx = context.WithValue(ctx, pipelineKey{}, next)
		pipe := fw.orig.Pipeline()
		for _, cmd := range cmds {
			_ = pipe.Process(ctx, cmd)
		}
		_, err := pipe.Exec(ctx)
		return err
	}
}

// router is the original's hook. Where several copies of one client
// forward through it (several relock Clients on one go-redis client),
// each adds a router; any of them hands a command back, as the chain in
// its context is the copy's own.
type router struct{ f *forwards }

func (router) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r router) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if r.f.n.Load() > 0 {
			if back, ok := ctx.Value(processKey{}).(redis.ProcessHook); ok {
				return back(ctx, cmd)
			}
		}
		return next(ctx, cmd)
	}
}

func (r router) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if r.f.n.Load() > 0 {
			if back, ok := ctx.Value(pipelineKey{}).(redis.ProcessPipelineHook); ok {
				return back(ctx, cmds)
			}
		}
		return next(ctx, cmds)
	}
}
