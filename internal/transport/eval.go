package transport

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Eval runs script and maps a nil reply to (nil, nil).
//
// On a cluster, a call that could not even connect (the slot's master is
// dead and go-redis has not yet learnt of its replacement, which it
// otherwise does only every minute) reloads the cluster's layout and is
// sent again, with backoff, until ctx ends. A dial error means the script
// never ran, so sending it again cannot apply it twice. Other network
// errors (a timeout: the script may have run) are returned, once the
// layout is reloaded for the next call, within ctx (awaitLayout).
func Eval(ctx context.Context, rdb redis.Scripter, s *redis.Script, keys []string, args ...any) (any, error) {
	if _, ok := rdb.(*Pipe); ok {
		return (&Call{Script: s, Keys: keys}).Run(ctx, rdb, args...)
	}
	v, err := eval(ctx, rdb, s, keys, args, true)
	if err != nil {
		err = Ended(ctx, nil, err)
	}
	return v, err
}

// EvalWithin is Eval for a caller whose ctx deadline bounds the whole
// call, RedLock's NodeTimeout: after a call that got no answer it has a
// cluster client reload its layout in the background, and does not wait
// for that.
func EvalWithin(ctx context.Context, rdb redis.Scripter, s *redis.Script, keys []string, args ...any) (any, error) {
	return eval(ctx, rdb, s, keys, args, false)
}

func eval(ctx context.Context, rdb redis.Scripter, s *redis.Script, keys []string, args []any, await bool) (any, error) {
	if p, ok := rdb.(*Pipe); ok {
		rdb = p.rdb
	}
	cc, cluster := rdb.(*redis.ClusterClient)
	backoff := 50 * time.Millisecond
	for {
		var master string
		if cluster && len(keys) > 0 {
			if node, err := cc.MasterForKey(ctx, keys[0]); err == nil {
				master = node.Options().Addr
			}
		}
		v, err := s.Run(ctx, rdb, keys, args...).Result()
		if errors.Is(err, redis.Nil) {
			return nil, nil
		}
		if !cluster || err == nil {
			return v, err
		}
		switch {
		case len(keys) == 0 || !Unanswered(err):
		case await:
			// A master that timed out may be failing over: let the next
			// call (an acquire's undo, a retry) find out where its slots
			// went.
			awaitLayout(ctx, cc, keys[0], master)
		default:
			cc.ReloadState(ctx)
		}
		if !IsDialError(err) {
			return v, err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return v, err
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// layoutWait bounds awaitLayout.
const layoutWait = time.Second

// awaitLayout has cc reload its cluster layout after a call for key,
// sent to master, failed without an answer, and waits, for layoutWait at
// most, until the layout names another master for key: go-redis reloads
// in the background, and a call sent before that completes would go to
// the silent master again and wait out another read timeout. When no
// failover is under way the layout keeps the master and the wait runs
// out. The wait is the caller's time, so it ends with ctx too: a call
// whose own deadline ran out returns at once, the reload going on in the
// background for whichever call comes next.
func awaitLayout(ctx context.Context, cc *redis.ClusterClient, key, master string) {
	cc.ReloadState(ctx)
	if master == "" || ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, layoutWait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if node, err := cc.MasterForKey(ctx, key); err == nil && node.Options().Addr != master {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cc.ReloadState(ctx)
	}
}
