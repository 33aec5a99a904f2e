package election

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// observeRetry is how long Observe waits to read the leader again after
// a read failed, unless a change is announced first.
const observeRetry = time.Second

// Observe returns a channel of the election's leaders, in order: the
// leader at the time of the call, if there is one, then every new leader
// and every new value a leader proclaims, as the election's channel
// announces them. Nothing is sent for a leader's resignation or loss;
// the next leader is. The channel is closed when ctx ends or the Client
// closes.
//
// An observer listens on the Client's shared subscription, one per
// election however many observers a Client has, and sends no Redis
// command while nothing changes: on each announcement it reads (one
// script call) the entries of the election's change log it has not seen,
// so it gets every change in order even when several come at once, or
// while its subscription was reconnecting. The log keeps the last 1000
// changes: an observer further behind than that skips the oldest.
func (e *Election) Observe(ctx context.Context) (<-chan Leader, error) {
	if e == nil {
		return nil, errNil
	}
	if err := e.check(ctx); err != nil {
		return nil, err
	}
	// Subscribed before the first read: a change after that read is
	// announced to this subscription.
	// Every announcement is a term, never "0": each wakes every
	// observer.
	sub, err := e.c.Hub().Subscribe(ctx, e.keys[3], hub.WakeOne)
	if errors.Is(err, hub.ErrClosed) {
		err = relock.ErrClosed
	}
	if err != nil {
		return nil, fmt.Errorf("election: observe %q: %w", e.name, err)
	}
	out := make(chan Leader)
	if !e.c.Background(func() { e.observe(ctx, sub, out) }) {
		sub.Close()
		return nil, fmt.Errorf("election: observe %q: %w", e.name, relock.ErrClosed)
	}
	return out, nil
}

// observe is Observe's goroutine, owned by the Client: it ends when ctx
// ends or the Client's hub closes, which Shutdown does before it waits
// for it. It reads the current leader and the log's position first, then
// the log's new entries on each announcement.
func (e *Election) observe(ctx context.Context, sub *hub.Subscription, out chan<- Leader) {
	defer close(out)
	defer sub.Close()
	last := ""
	for {
		ls, next, err := e.unseen(ctx, last)
		if err == nil {
			last = next
		}
		for _, l := range ls {
			select {
			case out <- l:
			case <-ctx.Done():
				return
			case <-e.c.Hub().Done():
				return
			}
		}
		if !e.sleep(ctx, sub, err != nil) {
			return
		}
	}
}

// unseen returns the leaders an observer has not seen since the log
// entry last ("": the current leader) and the log entry it has then seen.
func (e *Election) unseen(ctx context.Context, last string) ([]Leader, string, error) {
	opctx, cancel := e.c.OpContext(ctx)
	defer cancel()
	reply, err := transport.Eval(opctx, e.c.Redis, lua.ElectionObserve(), []string{e.keys[0], e.keys[1], e.keys[4]}, last)
	if err != nil {
		return nil, last, err
	}
	r, _ := reply.([]any)
	if last == "" {
		if len(r) != 3 {
			return nil, last, fmt.Errorf("unexpected observe reply %v", reply)
		}
		id, _ := r[2].(string)
		if r[0] == nil {
			return nil, id, nil
		}
		l, err := leaderOf(r[0], r[1])
		return []Leader{l}, id, err
	}
	var ls []Leader
	for _, entry := range r {
		pair, _ := entry.([]any)
		if len(pair) != 2 {
			return nil, last, fmt.Errorf("unexpected log entry %v", entry)
		}
		fields, _ := pair[1].([]any)
		var term, value any
		for i := 0; i+1 < len(fields); i += 2 {
			switch fields[i] {
			case "term":
				term = fields[i+1]
			case "value":
				value = fields[i+1]
			}
		}
		l, err := leaderOf(value, term)
		if err != nil {
			return nil, last, err
		}
		ls = append(ls, l)
		last, _ = pair[0].(string)
	}
	if len(r) == observeBatch {
		// More may follow: read on at once rather than at the next
		// announcement.
		more, next, err := e.unseen(ctx, last)
		return append(ls, more...), next, err
	}
	return ls, last, nil
}

// observeBatch is how many log entries election_observe.lua returns at
// most.
const observeBatch = 100

// sleep waits for an announcement, or for observeRetry when retry is
// set. It reports false when ctx ended or the hub closed.
func (e *Election) sleep(ctx context.Context, sub *hub.Subscription, retry bool) bool {
	var again <-chan time.Time
	if retry {
		t := time.NewTimer(observeRetry)
		defer t.Stop()
		again = t.C
	}
	select {
	case <-sub.C():
	case <-again:
	case <-ctx.Done():
		return false
	case <-e.c.Hub().Done():
		return false
	}
	return true
}
