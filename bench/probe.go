package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// epoch is the origin of the benchmark's shared monotonic clock.
var epoch = time.Now()

// now reads the shared monotonic clock in nanoseconds; it is never 0.
func now() int64 { return int64(time.Since(epoch)) + 1 }

// A probe watches one worker's Redis client. It records when the current
// request got its first reply (the FIFO check: a request whose first
// attempt was answered before another request began was certainly ahead
// of it) and counts the calls and pipelines the client sent. When
// goroutines share a client, each has a probe of its own in its context
// for the first reply, and the client's probe counts the calls.
type probe struct {
	first atomic.Int64 // now() at the first reply since reset; 0 none yet
	calls atomic.Int64
	pipes atomic.Int64 // pipelined batches (go-redis) or DoMulti calls
	batch chan int     // if set, receives the size of each pipeline
	// owners maps a relock owner field to the probe of the worker whose
	// calls carry it, for a shared client's probe: relock pipelines the
	// calls of goroutines that meet, and a pipeline's context is none of
	// theirs, so its replies are told apart by the owner field in their
	// arguments, learnt from the worker's calls sent alone.
	owners sync.Map
}

// reset starts a new request: the next reply is its first.
func (p *probe) reset() { p.first.Store(0) }

func (p *probe) replied(ctx context.Context, n int) {
	p.calls.Add(int64(n))
	p.answered(ctx)
}

type probeKey struct{}

// withProbe returns ctx carrying p, the probe of the worker whose calls
// run under ctx: the libraries pass the caller's context (or one derived
// from it) down to their Redis calls, so the hook of a shared client can
// tell whose request a reply answers.
func withProbe(ctx context.Context, p *probe) context.Context {
	return context.WithValue(ctx, probeKey{}, p)
}

// answered records a reply to a lock attempt made under ctx: on the
// worker's probe ctx carries, else on the client's.
func (p *probe) answered(ctx context.Context) {
	if w, ok := ctx.Value(probeKey{}).(*probe); ok {
		p = w
	}
	p.first.CompareAndSwap(0, now())
}

// goredisHook feeds a probe from a go-redis client.
type goredisHook struct{ p *probe }

func (h goredisHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h goredisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.p.calls.Add(1)
		// Lock attempts are scripts, or SET for redsync; anything else
		// (a watchdog renewal, a state query) is not a request's reply.
		switch cmd.Name() {
		case "evalsha", "eval", "set":
			h.p.answered(ctx)
			if w, ok := ctx.Value(probeKey{}).(*probe); ok {
				if field := ownerField(cmd); field != "" {
					h.p.owners.Store(field, w)
				}
			}
		}
		return err
	}
}

// ownerField returns the relock owner field among cmd's arguments,
// "<client id>:<owner>" (a 36-character UUID, a colon, a number), or "".
func ownerField(cmd redis.Cmder) string {
	for _, a := range cmd.Args() {
		s, ok := a.(string)
		if ok && len(s) > 37 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-' && s[36] == ':' && s[37] >= '0' && s[37] <= '9' {
			return s
		}
	}
	return ""
}

func (h goredisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.p.pipes.Add(1)
		h.p.calls.Add(int64(len(cmds)))
		at := now()
		for _, cmd := range cmds {
			if cmd.Name() != "evalsha" && cmd.Name() != "eval" {
				continue
			}
			if w, ok := h.p.owners.Load(ownerField(cmd)); ok {
				w.(*probe).first.CompareAndSwap(0, at)
			}
		}
		if h.p.batch != nil {
			select {
			case h.p.batch <- len(cmds):
			default:
			}
		}
		return err
	}
}

// hookedRueidis feeds a probe from a rueidis client; rueidislock sends
// every command through Do.
type hookedRueidis struct {
	rueidis.Client
	p *probe
}

func (c hookedRueidis) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	r := c.Client.Do(ctx, cmd)
	c.p.replied(ctx, 1)
	return r
}

func (c hookedRueidis) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	r := c.Client.DoMulti(ctx, multi...)
	c.p.pipes.Add(1)
	c.p.replied(ctx, len(multi))
	return r
}
