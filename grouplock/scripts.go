package grouplock

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hashlock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/transport"
)

// args returns head followed by the values' fields, a script's ARGV.
func (o *ops) args(head ...any) []any {
	return append(append(make([]any, 0, len(head)+len(o.fields)), head...), o.fields...)
}

// Acquire runs the acquire script once: it replies 1 (acquired), 0
// (late: hashlock.Result.Late) or {ms}
// (the wait until the taken values' leases run out) and leaves nothing
// behind a failed attempt, so every mode is the same attempt. There is no
// registry of waiters: all of them listen on the group's channel.
func (o *ops) Acquire(ctx context.Context, f hashlock.Field, _ hashlock.Mode, attempt int64) (hashlock.Result, error) {
	reply, err := o.l.C.T.RunAcquire(ctx, transport.OneReply, &o.acquireCall, o.args(o.l.LeaseArg(), f.Arg, attempt)...)
	if err != nil || transport.OneReply(reply) {
		return hashlock.Result{Acquired: err == nil}, err
	}
	return hashlock.PTTL(reply)
}

// Channel is where releases wake waiters: the group's channel, Redisson's
// as relock's. relock's releases publish "1" there (wake all); a Redisson
// release's "0" wakes one waiter of each client, as among Redisson
// clients, and the others try again when the leases they wait for run
// out.
func (o *ops) Channel(string) (string, string) { return o.keys[1], "" }

func (o *ops) Unlock(ctx context.Context, rdb redis.Scripter, f hashlock.Field, last bool) (any, error) {
	return o.unlockCall.Run(ctx, rdb, o.args(o.l.LeaseArg(), f.Arg, o.l.C.T.PublishArg(), transport.Flag(last))...)
}

func (o *ops) ForceUnlock(ctx context.Context) (any, error) {
	return transport.Eval(ctx, o.l.C.Redis, lua.GroupForceUnlock(), o.keys[:2], o.args(o.l.C.T.PublishArg())...)
}

// Renewal renews every value of the set while the owner holds them all.
func (o *ops) Renewal(f hashlock.Field) renew.Renewal {
	return renew.Renewal{
		Script: lua.GroupRenew(),
		Keys:   o.keys[:1],
		Args:   o.args(o.l.C.WatchdogArg, f.Arg),
	}
}
