package renew

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// A batch is one pipeline of renewals: the leases it covers (at most the
// batch size), the slots whose leases they are (nil for a batch of
// checks), its cutoff, and once sent, when, each lease's reply and how
// long the answers took.
type batch struct {
	leases []*Lease
	slots  []*slot
	cutoff time.Duration

	sent time.Time
	cmds []*redis.Cmd
	err  error         // the pipeline's first error, for the log
	took time.Duration // from sent to the last answer
}

// send renews b's leases in one pipeline, cut off after b.cutoff, and
// reports the replies on out. Renewals the server answers NOSCRIPT (a
// restarted or flushed server) are sent again as EVAL in a second
// pipeline.
func (w *Watchdog) send(ctx context.Context, b batch, out chan<- batch) {
	b.sent = time.Now()
	b.cmds = make([]*redis.Cmd, len(b.leases))
	ctx, cancel := context.WithTimeout(ctx, b.cutoff)
	b.err = w.exec(ctx, b.leases, b.cmds)
	cancel()
	b.took = time.Since(b.sent)
	out <- b
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

// apply records a batch's replies: 1 moves the lease's deadline to the
// batch's send time plus the timeout, 0 reports the lease lost, and an
// error leaves the deadline where it was and has the lease's slot retry.
// A renewal sent once the deadline had passed saves nothing: the lease
// was lost then, whichever of the batch and the expiry timer run saw
// first. A slot whose last batch is back is due again, its earliest
// deadline set anew (and any lease whose deadline came meanwhile lost).
func (w *Watchdog) apply(b batch) {
	type loss struct {
		l      *Lease
		reason error
	}
	var lost []loss
	errs := 0
	now := time.Now()
	w.mu.Lock()
	onRound := w.onRound
	for i, l := range b.leases {
		if l.ended {
			continue
		}
		n, err := b.cmds[i].Int64()
		switch {
		case !b.sent.Before(w.deadlineLocked(l)):
			lost = append(lost, loss{w.endLocked(l), ErrExpired})
		case err != nil:
			errs++
			w.retryLocked(l, now)
		case n == 1:
			if b.sent.After(l.renewed) {
				l.renewed = b.sent
			}
			if l.gone != nil && !b.sent.Before(l.checked) {
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
	var expired []*Lease
	for _, sl := range b.slots {
		if sl.pending--; sl.pending == 0 {
			expired = w.scanLocked(sl, now, expired)
		}
	}
	w.mu.Unlock()
	for _, l := range expired {
		lost = append(lost, loss{l, ErrExpired})
	}
	if errs > 0 && w.log != nil {
		err := b.err
		if err == nil {
			err = errors.New("unexpected reply")
		}
		w.log.Warn("relock: lease renewal failed; retrying", "locks", errs, "error", err)
	}
	for _, x := range lost {
		w.fire(x.l, x.reason)
	}
	if onRound != nil {
		onRound(len(b.leases), errs, len(lost), b.took)
	}
}

// DefaultBatchSize is how many renewals a batch carries at most unless
// SetBatchSize says otherwise: at a few microseconds a renewal, a batch
// takes Redis milliseconds, far within the shortest interval.
const DefaultBatchSize = 2000

// SetBatchSize sets watchdog.Options.BatchSize (relock's
// Options.WatchdogBatchSize): n, at least 1, is how many renewals a
// batch carries at most from then on.
func (w *Watchdog) SetBatchSize(n int) error {
	if n < 1 {
		return fmt.Errorf("watchdog: batch size %d not at least 1", n)
	}
	w.mu.Lock()
	w.size = n
	for _, s := range w.schedules {
		s.full = false // by the old size
	}
	w.mu.Unlock()
	return nil
}
