package latch

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/wait"
	"github.com/relock-go/relock/observe"
)

// Await waits until the latch is open: its count reached zero, was
// deleted, or was never set. It returns nil then; an error matching
// ctx.Err() when ctx ends first; relock.ErrClosed when the client
// closes. A wait leaves nothing in Redis.
func (l *Latch) Await(ctx context.Context) error {
	if l == nil {
		return errNil
	}
	_, err := l.await(ctx, -1)
	return err
}

// TryAwait is Await waiting at most wait; 0 means one look at the count.
// It reports whether the latch was open; running out of time is false
// with a nil error.
func (l *Latch) TryAwait(ctx context.Context, wait time.Duration) (bool, error) {
	if l == nil {
		return false, errNil
	}
	if err := core.CheckWait("latch", wait); err != nil {
		return false, err
	}
	return l.await(ctx, wait)
}

// await runs internal/wait's loop with the latch's opening as the thing
// acquired, waiting at most bound (negative: until ctx ends). The loop
// is what guarantees that no opening is missed: the waiter's
// subscription to the channel is in place before the look at the count
// that decides to sleep, so the message of any CountDown or Delete after
// that look reaches it. Every message on a latch's channel wakes every
// waiter with the message (see hub.WakeAll): "0" says the latch opened,
// and the waiter returns without a read; any other message is ambiguous
// (Redisson's "1" is both a new count and a Delete), and the client's
// waiters read the count once for all of them (see view). Nothing is
// acquired, so there is nothing to give up.
func (l *Latch) await(ctx context.Context, bound time.Duration) (bool, error) {
	if err := l.check(ctx); err != nil {
		return false, err
	}
	v, since := enter(l.c, l.name)
	defer v.leave()
	op := observe.OpAwait
	if bound >= 0 {
		op = observe.OpTryAwait
	}
	a := &awaiter{l: l, v: v, since: since, once: bound == 0}
	if bound > 0 {
		a.until = time.Now().Add(bound)
	}
	octx, done := l.c.StartAcquire(ctx, "latch", op, l.name)
	err := wait.Acquire(octx, wait.Spec{
		Hub:      l.c.Hub(),
		Channel:  l.channel,
		Wake:     hub.WakeAll,
		Acquirer: a,
		Wait:     bound,
		Done:     done,
	})
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, l.errorf("await", ctx.Err())
	case errors.Is(err, core.ErrNotAcquired):
		return false, nil // the wait ran out
	case l.closing():
		// A read cut off by Close fails with go-redis's "client is
		// closed": the wait ended because the client closed.
		return false, l.errorf("await", relock.ErrClosed)
	}
	return false, l.errorf("await", err)
}

// closing reports whether l's client has begun to close: Close closes
// the hub before the connections a read of the count may be using.
func (l *Latch) closing() bool {
	select {
	case <-l.c.Hub().Done():
		return true
	default:
		return false
	}
}

// An awaiter is one wait on a latch, as internal/wait's loop drives it.
type awaiter struct {
	l     *Latch
	v     *view
	since uint64 // the view's reads begun before this wait began
	once  bool   // TryAwait(0): one look, which must read
	// until is when a TryAwait's wait runs out (zero for an Await):
	// from then on every look reads (see Attempt).
	until time.Time
}

// Attempt looks at the count, through the client's view of the latch:
// the latch is "acquired" when it is open. A closed latch has no time
// limit: only a message ends the sleep.
//
// The look that decides a TryAwait's false, the one after its wait ran
// out, reads the count rather than take the view's answer: the view's
// "closed" holds until a message says otherwise, and the message of an
// opening that happened before this call may not have reached the
// client yet. Trusted then, it would report closed a latch that was open
// from before the call until it returned (a CountDown to zero, then a
// TryAwait on another client whose view had found the latch closed).
// A sleeping Await is woken by that message when it comes; a TryAwait
// that gives up must not answer for it.
func (a *awaiter) Attempt(ctx context.Context, listening bool) (wait.Outcome, error) {
	var open bool
	var err error
	if a.once || (!a.until.IsZero() && !time.Now().Before(a.until)) {
		open, err = a.l.isOpen(ctx)
	} else {
		open, err = a.v.look(ctx, a.l, a.since, listening)
	}
	return wait.Outcome{Acquired: err == nil && open, TTL: -1}, err
}

// Handoff takes the message that woke the waiter: "0" says a CountDown
// opened the latch after the waiter began listening, which is what it
// waited for, whatever happened to the count since. Any other message
// leaves the waiter to look again.
func (a *awaiter) Handoff(_ context.Context, note string) (bool, error) {
	return note == opened, nil
}

// isOpen reads the count: the latch is open when there is none.
func (l *Latch) isOpen(ctx context.Context) (bool, error) {
	n, err := l.count(ctx)
	return err == nil && n <= 0, err
}

// views are the latches awaited on each client, by client and name.
// A view lives while a wait on its latch does.
var views struct {
	mu sync.Mutex // guards m and every view's users
	m  map[viewKey]*view
}

type viewKey struct {
	c    *core.Client
	name string
}

// A view is what one client's waiters on one latch know of it together,
// so that a thousand waiters cost one read, not a thousand: the last read
// that found the latch closed, which stays true while the channel's wake
// stamp (hub.Hub.Wakes) is the one it was when that read began, and
// the read under way, whose answer every waiter looking meanwhile takes.
type view struct {
	key   viewKey
	users int // waits in the view; guarded by views.mu

	mu     sync.Mutex // guards reads, closed, shut, stamp and flight
	reads  uint64     // reads begun
	closed bool       // a read found the latch closed
	shut   bool       // a read found the latch closed after the stamp was stamp
	stamp  uint64
	flight *flight // the read under way, nil for none
}

// A flight is one read of the count, shared by the waiters that look
// while it runs. Its fields are written before done is closed.
type flight struct {
	id    uint64 // the view's reads when it began, itself included
	stamp uint64 // the channel's wake stamp when it began
	done  chan struct{}
	open  bool
	err   error
}

// enter returns the view of name on c, made if no wait has it, and the
// reads begun in it so far.
func enter(c *core.Client, name string) (*view, uint64) {
	k := viewKey{c, name}
	views.mu.Lock()
	v := views.m[k]
	if v == nil {
		if views.m == nil {
			views.m = make(map[viewKey]*view)
		}
		v = &view{key: k}
		views.m[k] = v
	}
	v.users++
	views.mu.Unlock()
	v.mu.Lock()
	defer v.mu.Unlock()
	return v, v.reads
}

// leave ends a wait's use of v; the last wait drops it.
func (v *view) leave() {
	views.mu.Lock()
	defer views.mu.Unlock()
	if v.users--; v.users == 0 {
		delete(views.m, v.key)
	}
}

// look tells whether the latch l is open, for a wait that began after
// since reads of v had begun, listening on l's channel or not yet.
//
// While the channel's wake stamp is the one a read that found the latch
// closed began at, the latch is closed still: any change since would
// have been published to the channel, and the message would have changed
// the stamp. Otherwise the waiter takes the answer of the read under way,
// if it began at the current stamp (or at all, for a waiter not yet
// listening, whose answer is only a first look), or begins one. A closed
// answer holds for every waiter; an open one only for those that began
// waiting before the read was sent (the count may have been set again
// between that read and a later wait), so a later waiter reads for
// itself. Only a read by a listening waiter is kept.
//
// A waiter not yet listening reads nothing once a read found the latch
// closed: whatever it found, it would subscribe and look again, and only
// an open latch would spare it that. So a thousand waiters that begin
// together cost a read or two per client, not one each.
func (v *view) look(ctx context.Context, l *Latch, since uint64, listening bool) (bool, error) {
	var stamp uint64 // 0: the answer is not kept
	if listening {
		// While the subscription is being made again, messages may be
		// lost, and the reconnection will wake every waiter: the
		// answer is not kept.
		if s, live := l.c.Hub().Wakes(l.channel); live {
			stamp = s
		}
	}
	v.mu.Lock()
	if (!listening && v.closed) || (stamp != 0 && v.shut && v.stamp == stamp) {
		v.mu.Unlock()
		return false, nil
	}
	f := v.flight
	if f == nil || (stamp != 0 && f.stamp != stamp) {
		v.reads++
		f = &flight{id: v.reads, stamp: stamp, done: make(chan struct{})}
		v.flight = f
		v.mu.Unlock()
		f.open, f.err = l.isOpen(ctx)
		v.mu.Lock()
		if f.err == nil && !f.open {
			v.closed = true
			if stamp != 0 && stamp >= v.stamp {
				v.shut, v.stamp = true, stamp
			}
		}
		if v.flight == f {
			v.flight = nil
		}
		v.mu.Unlock()
		close(f.done)
		return f.open, f.err
	}
	v.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	if f.err == nil && (!f.open || f.id > since) {
		return f.open, nil
	}
	// The read failed, perhaps on its reader's context alone, or found
	// the latch open before this wait began.
	return l.isOpen(ctx)
}
