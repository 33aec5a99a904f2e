package derive

import (
	"context"

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
	orig.AddHook(router{})
	cp.AddHook(forwarder{orig: orig})
}

// forwarder is the copy's hook.
type forwarder struct{ orig redis.UniversalClient }

func (forwarder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f forwarder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return f.orig.Process(context.WithValue(ctx, processKey{}, next), cmd)
	}
}

func (f forwarder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx = context.WithValue(ctx, pipelineKey{}, next)
		pipe := f.orig.Pipeline()
		for _, cmd := range cmds {
			_ = pipe.Process(ctx, cmd)
		}
		_, err := pipe.Exec(ctx)
		return err
	}
}

// router is the original's hook.
type router struct{}

func (router) DialHook(next redis.DialHook) redis.DialHook { return next }

func (router) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if back, ok := ctx.Value(processKey{}).(redis.ProcessHook); ok {
			return back(ctx, cmd)
		}
		return next(ctx, cmd)
	}
}

func (router) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if back, ok := ctx.Value(pipelineKey{}).(redis.ProcessPipelineHook); ok {
			return back(ctx, cmds)
		}
		return next(ctx, cmds)
	}
}
