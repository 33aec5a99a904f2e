package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// lifecycle is whether the client is open, the operations under way, and
// relock's own copies of the caller's client, which Shutdown closes once
// those operations are done, or to cut them off once its ctx ends.
type lifecycle struct {
	closed atomic.Bool // Shutdown began: no operation starts
	// ops is read-held by every operation that runs scripts (Begin).
	// Shutdown write-locks it, and unlocks it at once, to learn that
	// they are done (settle) before it closes the script client; it
	// cuts them off when its ctx ends first.
	ops sync.RWMutex
	end func() // ops.RUnlock, made once: Begin returns it without allocating

	// closeOwn closes relock's copies of the caller's client
	// (transport.Transport.Close), once (closeOwned).
	closeOwn  func() error
	closeOnce sync.Once // guards closeErr
	closeErr  error

	// hooksMu guards hooks and hooked, a leaf lock (package doc, "Lock
	// order"). hooks are what AtClose registered, at most one a key;
	// hooked: Shutdown took them, and AtClose registers nothing more.
	hooksMu sync.Mutex
	hooks   map[any]func()
	hooked  bool
}

// init sets l up in place (end is bound to l.ops), for NewClient.
func (l *lifecycle) init(closeOwn func() error) {
	l.end, l.closeOwn = l.ops.RUnlock, closeOwn
}

// Begin starts an operation that runs scripts: Close waits for end
// before closing the script client. It fails with ErrClosed after Close,
// and waits as Check does for the client's pub/sub mode.
func (c *Client) Begin(ctx context.Context) (end func(), err error) {
	// Waited for before the read lock: a Shutdown must not wait for a
	// probe's answer.
	if err := c.Check(ctx); err != nil {
		return nil, err
	}
	c.life.ops.RLock()
	if c.life.closed.Load() {
		c.life.ops.RUnlock()
		return nil, ErrClosed
	}
	return c.life.end, nil
}

// Check returns Usable's error for a nil c or ctx, and ErrClosed after
// Close. Before that it waits, until ctx ends, for the client's pub/sub
// mode to be known (pubsubMode), and returns the error that kept it from
// being known, if any: an operation calls Check or Begin before it reads
// Hub, Publish or PublishArg.
func (c *Client) Check(ctx context.Context) error {
	if err := Usable(c != nil, ctx); err != nil {
		return err
	}
	if c.life.closed.Load() {
		return ErrClosed
	}
	return c.pubsub.await(ctx, c)
}

// CloseTimeout bounds the releases Close makes (see Shutdown).
const CloseTimeout = 5 * time.Second

// Close is Shutdown bounded by CloseTimeout.
func (c *Client) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), CloseTimeout)
	defer cancel()
	return c.Shutdown(ctx)
}

// Shutdown stops the watchdog and the hub and waits for their goroutines,
// then releases the locks the client's owners still hold, and waits for
// the clean-ups under way in the background and the operations under way,
// until ctx ends: then it cuts them off (cutOff), waits Grace more at
// most, and returns.
// Their contexts are cancelled with cause ErrClosed first, so a holder's
// work is told before the lock can go to anyone else. Waits end with
// ErrClosed; no operation starts after Shutdown begins. Shutdown is
// idempotent: a second call returns at once.
func (c *Client) Shutdown(ctx context.Context) error {
	if c.life.closed.Swap(true) {
		return nil
	}
	// Cancelling does not cut off a read go-redis is blocked in (it heeds
	// deadlines only): once ctx ends, whatever Shutdown still waits for
	// is cut off, the releases included.
	stop := context.AfterFunc(ctx, c.cutOff)
	defer stop()
	_ = c.watchdog.Close() // the error of closing its own client: nothing to do
	// Closing the hub ends every wait; operations still running (a
	// waiter leaving a fair queue) finish before the scripts' client goes.
	var err error
	if hub := c.pubsub.close(); hub != nil {
		err = hub.Close()
	}
	holds := c.holds.takeAll()
	for _, h := range holds {
		h.end(ErrClosed)
	}
	// The holds a leak ended (leak.go) are released too: their records
	// would stay until their leases ran out.
	for key, h := range c.holds.takeLeaked() {
		holds[key] = h
	}
	err = errors.Join(err, c.release(ctx, holds))
	c.settle(ctx)
	c.runHooks()
	return errors.Join(err, c.closeOwned())
}

// AtClose registers f to run once Shutdown has released the holds and
// settled the work in the background: a lock package that keeps state
// for each client outside it (the semaphore's acknowledgements) forgets
// the client there. A key registers one f: later calls with the same key
// add nothing until the hooks run. AtClose reports false, registering
// nothing, once Shutdown has taken the hooks; the caller then keeps
// nothing for the client, which holds no more state of its own either.
// It may be called with the caller's locks held: f runs later, on
// Shutdown's goroutine, with no lock of core's held.
func (c *Client) AtClose(key any, f func()) bool {
	l := &c.life
	l.hooksMu.Lock()
	defer l.hooksMu.Unlock()
	if l.hooked {
		return false
	}
	if _, ok := l.hooks[key]; !ok {
		if l.hooks == nil {
			l.hooks = make(map[any]func())
		}
		l.hooks[key] = f
	}
	return true
}

// runHooks runs, once, what AtClose registered.
func (c *Client) runHooks() {
	l := &c.life
	l.hooksMu.Lock()
	hooks := l.hooks
	l.hooks, l.hooked = nil, true
	l.hooksMu.Unlock()
	for _, f := range hooks {
		f()
	}
}

// settle stops Background and Detach and waits for the work they started
// and for the operations under way (Begin), until ctx ends and Grace
// after that (time for them to return once cutOff has closed their
// connections). What runs on after that is bounded by OpTimeout and the
// go-redis client's own timeouts.
func (c *Client) settle(ctx context.Context) {
	defer c.bg.cancel()
	c.stopBackground()
	done := make(chan struct{})
	go func() {
		c.bg.wg.Wait()
		// No operation starts once closed is set: the lock, once held,
		// tells that every one has ended.
		c.life.ops.Lock()
		defer c.life.ops.Unlock()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	grace := time.NewTimer(Grace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
	}
}

// cutOff ends the contexts of the work in the background
// (BackgroundContext) and closes relock's own copies of the caller's
// client, which cuts off the round trips blocked on them, reads of a
// server that does not answer and handshakes on new connections
// included. One the caller configured so that relock uses it as it is
// stays open: the work's OpTimeout and the client's timeouts bound it.
func (c *Client) cutOff() {
	c.bg.cancel()
	_ = c.closeOwned()
}

// closeOwned closes relock's own copies of the caller's client, once.
func (c *Client) closeOwned() error {
	l := &c.life
	l.closeOnce.Do(func() { l.closeErr = l.closeOwn() })
	return l.closeErr
}

// release releases holds in Redis, several at a time, until ctx ends.
// A hold whose lock type gave no Releaser is left to its lease.
func (c *Client) release(ctx context.Context, holds map[HoldKey]*hold) error {
	var g errgroup.Group
	g.SetLimit(releaseParallel)
	for key, h := range holds {
		if h.releaser == nil {
			continue
		}
		g.Go(func() error {
			if err := h.releaser.Release(ctx, key.Field, h.count); err != nil {
				return fmt.Errorf("relock: releasing %q on close: %w", h.name(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// releaseParallel bounds the releases Shutdown has in flight.
const releaseParallel = 16
