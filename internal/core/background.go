package core

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/relock-go/relock/internal/transport"
)

// background is the goroutines the client owns for work that outlives
// the call that needed it (Background, Detach, Outlive, a probe), which
// Shutdown waits for (settle), and the clean-ups under way for each hold
// key, which the key's next acquire waits for (AwaitPending).
type background struct {
	mu sync.Mutex // guards done and pending, and orders wg.Add before wg.Wait
	// done: Shutdown waits for wg, so nothing more starts.
	done bool
	wg   sync.WaitGroup
	// pending holds the clean-ups under way for each hold key (Detach);
	// npending counts them, so that an acquire with nothing pending
	// takes no lock.
	pending  map[HoldKey]*pend
	npending atomic.Int64
	// running counts the goroutines Background started that have not
	// returned.
	running atomic.Int64

	// end ends the work's contexts (BackgroundContext) when Shutdown's
	// ctx ends before the work does (cutOff); cancel cancels it.
	end    context.Context
	cancel context.CancelFunc
}

// init sets b up in place, for NewClient.
func (b *background) init() {
	b.pending = make(map[HoldKey]*pend)
	b.end, b.cancel = context.WithCancel(context.Background())
}

// A pend counts the background clean-ups under way for one hold key;
// done is closed when the last ends. last is closed when the clean-up
// detached last ends: the next one starts after it (Detach). n and last
// are guarded by background.mu.
type pend struct {
	n    int
	done chan struct{}
	last chan struct{}
}

// Background runs f, which the caller bounds in time, in a goroutine
// the client owns: Shutdown waits for it before it closes the script
// client, until its ctx ends (settle). f's round trips must run on a
// context that ends then (BackgroundContext): go-redis's retries wait out
// their backoff on the command's context, even once the client is
// closed. After Shutdown has begun it runs nothing and reports false.
// It is for work a caller need not wait for, such as undoing an acquire
// that a master did not answer.
func (c *Client) Background(f func()) bool {
	b := &c.bg
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || c.life.closed.Load() {
		return false
	}
	b.wg.Add(1)
	b.running.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.running.Add(-1)
		f()
	}()
	return true
}

// Running reports how many of the client's background goroutines
// (Background) have not returned: tests wait for 0 before they look at
// what a call left behind.
func (c *Client) Running() int64 { return c.bg.running.Load() }

// Detach runs f in the background, on a context with ctx's values and
// not its cancellation, bounded by OpTimeout, in a goroutine the client
// owns (Shutdown waits for it). Until f returns, AwaitPending(key) waits:
// an owner's next acquire of the lock must not be undone by a clean-up of
// its last one. The clean-ups of one key run in the order they were
// detached, each once the one before returned: they were sent in that
// order for a reason (an undo's record of a given-up attempt before the
// give-up that removes what the attempt may have registered). It reports
// false, running nothing, once Shutdown began.
func (c *Client) Detach(ctx context.Context, key HoldKey, f func(ctx context.Context)) bool {
	b := &c.bg
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done || c.life.closed.Load() {
		return false
	}
	p := b.pending[key]
	if p == nil {
		p = &pend{done: make(chan struct{})}
		b.pending[key] = p
	}
	p.n++
	prev, mine := p.last, make(chan struct{})
	p.last = mine
	b.npending.Add(1)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		dctx, cancel := c.BackgroundContext(ctx)
		defer cancel()
		if prev != nil {
			select {
			case <-prev:
			case <-dctx.Done():
			}
		}
		f(dctx)
		close(mine)
		b.mu.Lock()
		defer b.mu.Unlock()
		b.npending.Add(-1)
		if p.n--; p.n == 0 {
			delete(b.pending, key)
			close(p.done)
		}
	}()
	return true
}

// AwaitPending waits until no clean-up for key is under way in the
// background (Detach), or ctx ends, whose error it then returns.
func (c *Client) AwaitPending(ctx context.Context, key HoldKey) error {
	b := &c.bg
	if b.npending.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	p := b.pending[key]
	b.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// BackgroundContext returns the context of background work on behalf of
// ctx: ctx's values, not its cancellation, ended after OpTimeout or when
// the client's Shutdown gives up waiting for it (its ctx ended).
func (c *Client) BackgroundContext(ctx context.Context) (context.Context, context.CancelFunc) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), transport.OpTimeout)
	stop := context.AfterFunc(c.bg.end, cancel)
	return bctx, func() { stop(); cancel() }
}

// stopBackground stops Background and Detach: nothing starts after it.
func (c *Client) stopBackground() {
	b := &c.bg
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = true
}
