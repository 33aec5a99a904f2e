package transport

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// A Call is a script bound to the KEYS of one lock, with the values its
// EVALSHA command sends every time boxed once (package doc), when the
// lock is made: the digest (once per script, for every lock) and the
// keys (once per lock, for all of its calls). A run then boxes nothing
// but its arguments, where go-redis's Script.Run boxes the digest and
// every key again for every call. A Call is not changed once bound, and
// is safe for concurrent use. A Call that is not bound (EvalAcquire's)
// runs as Eval does.
type Call struct {
	Script  *redis.Script
	Keys    []string
	digest  any   // Script's digest, as a script argument
	keyArgs []any // Keys, as script arguments
}

// digests holds each script's digest boxed, made once a script
// (*redis.Script to string in an any).
var digests sync.Map

// Bind binds k to s and keys, whose values keyArgs holds as script
// arguments already, in the same order (see KeyArgs): a lock boxes its
// keys once for all of its calls.
func (k *Call) Bind(s *redis.Script, keys []string, keyArgs []any) {
	d, ok := digests.Load(s)
	if !ok {
		d, _ = digests.LoadOrStore(s, any(s.Hash()))
	}
	*k = Call{Script: s, Keys: keys, digest: d, keyArgs: keyArgs}
}

// KeyArgs returns keys as script arguments, into dst when it has room.
func KeyArgs(dst []any, keys ...string) []any {
	dst = dst[:0]
	for _, key := range keys {
		dst = append(dst, key)
	}
	return dst
}

// processor is what a client needs to send a command it did not build.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// Run runs the call with args through rdb, as Eval does: a nil reply is
// (nil, nil), and an error of a call whose ctx ended matches ctx's error.
func (k *Call) Run(ctx context.Context, rdb redis.Scripter, args ...any) (any, error) {
	v, err := k.run(ctx, rdb, args)
	if err != nil {
		err = Ended(ctx, nil, err)
	}
	return v, err
}

// run sends the call as one EVALSHA of the boxed values, and as EVAL
// when the server does not have the script (NOSCRIPT). Through a Pipe it
// may go out in a pipeline with other goroutines' calls. On a cluster
// it goes through eval, which finds a failed master's replacement, but
// through a Pipe, which falls back to eval for a call that could not
// connect. args is copied, never kept, so that a caller's variadic
// arguments stay on its stack.
func (k *Call) run(ctx context.Context, rdb redis.Scripter, args []any) (any, error) {
	pipe, piped := rdb.(*Pipe)
	if piped {
		rdb = pipe.rdb
	}
	p, ok := rdb.(processor)
	cc, cluster := rdb.(*redis.ClusterClient)
	if !ok || cluster && !piped || k.digest == nil && !piped || len(k.Keys) == 0 {
		return eval(ctx, rdb, k.Script, k.Keys, slices.Clone(args), true)
	}
	cmd := k.command(ctx, args)
	var master string
	if piped {
		var gaveUp error
		if master, gaveUp = pipe.process(ctx, cmd, k.Keys[0]); gaveUp != nil {
			return nil, gaveUp
		}
	} else {
		_ = p.Process(ctx, cmd)
	}
	v, err := cmd.Result()
	switch {
	case err == nil:
	case isNoScript(err):
		v, err = k.Script.Eval(ctx, rdb, k.Keys, slices.Clone(args)...).Result()
	case cluster && IsDialError(err):
		// It never ran: eval sends it again once the layout names the
		// slot's new master.
		return eval(ctx, rdb, k.Script, k.Keys, slices.Clone(args), true)
	case cluster && Unanswered(err):
		awaitLayout(ctx, cc, k.Keys[0], master)
	}
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return v, err
}

// command returns the call's EVALSHA with args, which it copies.
func (k *Call) command(ctx context.Context, args []any) *redis.Cmd {
	digest, keyArgs := k.digest, k.keyArgs
	if digest == nil {
		digest, keyArgs = k.Script.Hash(), KeyArgs(nil, k.Keys...)
	}
	cmdArgs := make([]any, 0, 3+len(keyArgs)+len(args))
	cmdArgs = append(append(append(cmdArgs, "evalsha", digest, len(keyArgs)), keyArgs...), args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	cmd.SetFirstKeyPos(3)
	return cmd
}

// isNoScript reports the server's answer to an EVALSHA of a script it
// does not have.
func isNoScript(err error) bool {
	return !errors.Is(err, redis.Nil) && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
