package renew

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A round is one batch of renewals: the leases it covered, when it was sent
// and each lease's reply.
type round struct {
	sent   time.Time
	leases []*Lease
	cmds   []*redis.Cmd
	err    error         // the pipeline's first error, for the log
	took   time.Duration // from sent to the last answer
}

// round renews leases in one pipeline, cut off after cutoff, and reports
// the replies on out. Renewals the server answers NOSCRIPT (a restarted
// or flushed server) are sent again as EVAL in a second pipeline.
func (w *Watchdog) round(ctx context.Context, leases []*Lease, cutoff time.Duration, out chan<- round) {
	r := round{sent: time.Now(), leases: leases, cmds: make([]*redis.Cmd, len(leases))}
	ctx, cancel := context.WithTimeout(ctx, cutoff)
	r.err = w.exec(ctx, leases, r.cmds)
	cancel()
	r.took = time.Since(r.sent)
	out <- r
}

func (w *Watchdog) exec(ctx context.Context, leases []*Lease, cmds []*redis.Cmd) error {
	pipe := w.rdb.Pipeline()
	for i, l := range leases {
		cmds[i] = l.r.Script.EvalSha(ctx, pipe, l.r.Keys, l.r.Args...)
	}
	_, err := pipe.Exec(ctx)
	if err == nil {
		return nil
	}
	var missing []int
	for i, c := range cmds {
		if isNoScript(c.Err()) {
			missing = append(missing, i)
		}
	}
	if len(missing) == 0 {
		return err
	}
	pipe = w.rdb.Pipeline()
	for _, i := range missing {
		l := leases[i]
		cmds[i] = l.r.Script.Eval(ctx, pipe, l.r.Keys, l.r.Args...)
	}
	_, err = pipe.Exec(ctx)
	return err
}

func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// apply records a round's replies: 1 moves the lease's deadline to the
// round's send time plus the timeout, 0 reports the lease lost, and an
// error leaves the deadline where it was and has the lease's schedule
// retry. A renewal sent once the deadline had passed saves nothing: the
// lease was lost then, whichever of the round and the expiry timer run
// saw first.
func (w *Watchdog) apply(r round) {
	type loss struct {
		l      *Lease
		reason error
	}
	var lost []loss
	errs := 0
	now := time.Now()
	w.mu.Lock()
	onRound := w.onRound
	for i, l := range r.leases {
		if l.ended {
			continue
		}
		n, err := r.cmds[i].Int64()
		switch {
		case !r.sent.Before(w.deadlineLocked(l)):
			lost = append(lost, loss{w.endLocked(l), ErrExpired})
		case err != nil:
			errs++
			w.retryLocked(l, now)
		case n == 1:
			if r.sent.After(l.renewed) {
				l.renewed = r.sent
			}
			if l.gone != nil && !r.sent.Before(l.checked) {
				l.gone = nil // the lock is held: Check's hint was stale
			}
		default:
			reason := ErrGone
			if l.gone != nil {
				reason = l.gone
			}
			lost = append(lost, loss{w.endLocked(l), reason})
		}
	}
	w.mu.Unlock()
	if errs > 0 && w.log != nil {
		err := r.err
		if err == nil {
			err = errors.New("unexpected reply")
		}
		w.log.Warn("relock: lease renewal failed; retrying", "locks", errs, "error", err)
	}
	for _, x := range lost {
		w.fire(x.l, x.reason)
	}
	if onRound != nil {
		onRound(len(r.leases), errs, len(lost), r.took)
	}
}
