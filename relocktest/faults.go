package relocktest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
)

// errFailed answers the renewals of a round FailRenewals fails.
var errFailed = errors.New("relocktest: renewal failed by FailRenewals")

// renewals are the SHA1s of the scripts the watchdog renews leases with:
// locks' hashes, read holds, permits, group locks.
var renewals = map[string]bool{
	lua.Renew().Hash():         true,
	lua.RWReadRenew().Hash():   true,
	lua.PermitsUpdate().Hash(): true,
	lua.GroupRenew().Hash():    true,
}

// Counts are the faults a Kit has injected so far.
type Counts struct {
	Stalled int // renewal rounds delayed by StallRenewals
	Failed  int // renewal rounds failed by FailRenewals
	Dropped int // wake-up messages dropped by DropWakeups
}

// faults are the controls' pending faults and what they injected. All
// fields are guarded by mu.
type faults struct {
	mu    sync.Mutex
	stall int
	delay time.Duration
	fail  int
	drop  int
	done  Counts
}

// FailRenewals answers each of the Client's next n renewal rounds with an
// error, as a Redis that is down would, without sending it. The watchdog
// retries a failed round soon, and cancels the holders with
// relock.ErrLockLost once no renewal has succeeded for the lease less its
// margin: pass an n larger than those retries (100 is) for a Redis that
// stays down, and 0 to end it. Each call replaces the count left by the
// one before.
func (k *Kit) FailRenewals(n int) {
	if k == nil {
		return
	}
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	k.f.fail = max(n, 0)
}

// StallRenewals delays each of the Client's next n renewal rounds by d
// before sending it, as a slow Redis or network would; a round whose own
// timeout (a third of the lease) ends first fails instead. A stall
// shorter than the watchdog's margin (relock.Options.LeaseMargin)
// leaves the locks held; a longer run of stalls loses them. Each call
// replaces the stalls left by the one before; n 0 ends them.
func (k *Kit) StallRenewals(n int, d time.Duration) {
	if k == nil {
		return
	}
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	k.f.stall, k.f.delay = max(n, 0), d
}

// DropWakeups drops the next n messages to the Client's subscriptions
// that could wake a waiter: a lock's release or grant, a semaphore's or
// a permit's, a latch's count, an election's change (not the Client's
// force-unlock notices, nor a semaphore's echo marks). Each call replaces
// the count left by the one before; 0 ends it.
func (k *Kit) DropWakeups(n int) {
	if k == nil {
		return
	}
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	k.f.drop = max(n, 0)
}

// Counts reports the faults the Kit has injected so far, so that a test
// can tell that the fault it armed happened.
func (k *Kit) Counts() Counts {
	if k == nil {
		return Counts{}
	}
	k.f.mu.Lock()
	defer k.f.mu.Unlock()
	return k.f.done
}

// disarm drops every pending fault.
func (f *faults) disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stall, f.fail, f.drop = 0, 0, 0
}

// round takes the faults of one renewal round: a delay, and whether it
// fails.
func (f *faults) round() (delay time.Duration, fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stall > 0 {
		f.stall--
		f.done.Stalled++
		delay = f.delay
	}
	if f.fail > 0 {
		f.fail--
		f.done.Failed++
		fail = true
	}
	return delay, fail
}

// dropping takes one dropped message, if DropWakeups asked for one.
func (f *faults) dropping() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.drop == 0 {
		return false
	}
	f.drop--
	f.done.Dropped++
	return true
}

// pending reports whether a message may be dropped, for the connections
// to skip looking at messages otherwise.
func (f *faults) pending() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.drop > 0
}

// hook is the go-redis hook of the Kit's Client: it wraps each
// connection for DropWakeups, and applies the renewal faults to the
// pipelines that are watchdog rounds.
type hook struct{ f *faults }

func (h hook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &conn{Conn: c, f: h.f}, nil
	}
}

func (hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (h hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !isRound(cmds) {
			return next(ctx, cmds)
		}
		delay, fail := h.f.round()
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return answer(cmds, ctx.Err())
			}
		}
		if fail {
			return answer(cmds, errFailed)
		}
		return next(ctx, cmds)
	}
}

// answer sets err as every command's reply.
func answer(cmds []redis.Cmder, err error) error {
	for _, c := range cmds {
		c.SetErr(err)
	}
	return err
}

// isRound reports whether cmds are a watchdog round: renewal scripts
// only, sent as EVALSHA or, after NOSCRIPT, as EVAL. An acquire that
// renews (a fair lock's hand-off) is sent alone, not in a pipeline.
func isRound(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		args := c.Args()
		if len(args) < 2 {
			return false
		}
		s, _ := args[1].(string)
		switch c.Name() {
		case "evalsha":
		case "eval":
			sum := sha1.Sum([]byte(s))
			s = hex.EncodeToString(sum[:])
		default:
			return false
		}
		if !renewals[s] {
			return false
		}
	}
	return len(cmds) > 0
}
