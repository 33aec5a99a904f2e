package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relock-go/relock/internal/renew"
)

// HoldKey names one owner's holds on one lock of a client. Field is the
// owner's hash field, which for lock types with several sides (read/write)
// also tells the sides apart.
type HoldKey struct {
	Name  string
	Field string
}

// holdTable is the client's local record of the locks its owners hold,
// one hold per key, so that every lock value with the same name on the
// same client shares them.
type holdTable struct {
	// mu guards m and leaked, and the fields of each hold in m marked
	// so. A hold taken out of m (takeAll, remove) is its taker's alone:
	// only it ends the hold.
	mu sync.Mutex
	m  map[HoldKey]*hold
	// leaked holds the holds a leak ended (leak.go), whose records stay
	// in Redis until their leases run out (until): Shutdown releases
	// them with the table's (takeLeaked).
	leaked map[HoldKey]leakedHold
}

// A leakedHold is a hold a leak ended, and when its lease runs out at
// the latest.
type leakedHold struct {
	h     *hold
	until time.Time
}

// addLeakedLocked records h, which a leak ended and took out of the
// table, until its lease runs out, and forgets those whose leases ran
// out; t.mu is held.
func (t *holdTable) addLeakedLocked(h *hold, until time.Time) {
	now := time.Now()
	for k, l := range t.leaked {
		if now.After(l.until) {
			delete(t.leaked, k)
		}
	}
	if t.leaked == nil {
		t.leaked = make(map[HoldKey]leakedHold)
	}
	t.leaked[h.key] = leakedHold{h, until}
}

// takeLeaked empties the record of leaked holds and returns those whose
// leases may not have run out, for Shutdown.
func (t *holdTable) takeLeaked() map[HoldKey]*hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	holds := make(map[HoldKey]*hold, len(t.leaked))
	now := time.Now()
	for k, l := range t.leaked {
		if !now.After(l.until) {
			holds[k] = l.h
		}
	}
	t.leaked = nil
	return holds
}

// A hold is the local record of a lock held by one owner: how many Lock
// calls it has not yet unlocked, the contexts of those calls, and what
// keeps it alive.
type hold struct {
	// Set when the hold is made, read-only after.
	c     *Client
	kind  string    // Grant.Kind, for the Observer
	shown string    // Grant.Shown
	key   HoldKey   // the hold's key in holdTable.m
	since time.Time // when the first hold was granted

	// Guarded by holdTable.mu while the hold is in the table.
	count int
	token int64
	// first cancels the context the hold's first Lock returned, which
	// lives as long as the hold: a re-entry given it (or a context
	// derived from it) has its context as a child of it. reentries are
	// the later Lock calls not yet unlocked, in call order, one fewer
	// than count: each Unlock that leaves holds ends one (unlockedLocked),
	// so what a re-entry keeps goes with its Unlock, not the last one.
	first     context.CancelCauseFunc
	reentries []reentry

	lease    *renew.Lease // watchdog mode: &watch once started
	watch    renew.Lease  // the lease, in the hold's own allocation
	expiry   *time.Timer  // fixed-lease mode: forgets the hold at its end
	releaser Releaser     // releases the holds when the client shuts down
	// A tracked owner's hold (leak.go): its owner, and the stack of its
	// first Lock call when Config.LeakStacks is set. Set under both
	// holdTable.mu and the owner's tracker.mu.
	owner *owner
	stack []uintptr

	// unlocking counts the last-hold unlocks under way (BeginUnlock,
	// protocol.go), and lost is a loss the lease reported meanwhile,
	// which Unlocking.End applies unless the unlock's outcome ended the
	// hold first. Both guarded by holdTable.mu.
	unlocking int
	lost      error

	leaseEnd atomic.Int64 // fixed-lease mode: expires in Unix ns, for holdCtx
	// expires (fixed-lease mode, guarded by holdTable.mu) is when the
	// expiry timer ends the hold: the lease's end less the margin, on
	// the monotonic clock, which a step of the wall clock cannot move.
	expires time.Time
}

// name is the lock's name as users see it (Grant.Shown).
func (h *hold) name() string {
	if h.shown != "" {
		return h.shown
	}
	return h.key.Name
}

// takeAll empties the table and returns what it held, for Shutdown.
func (t *holdTable) takeAll() map[HoldKey]*hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	holds := t.m
	t.m = make(map[HoldKey]*hold)
	return holds
}

// removeLocked takes h out of the table if it is still key's hold, and
// reports whether it was; t.mu is held.
func (t *holdTable) removeLocked(key HoldKey, h *hold) bool {
	if t.m[key] != h {
		return false
	}
	delete(t.m, key)
	return true
}

// removeIf takes out of the table every hold on name whose field match
// accepts, and returns them.
func (t *holdTable) removeIf(name string, match func(field string) bool) []*hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	var taken []*hold
	for k, h := range t.m {
		if k.Name == name && match(k.Field) {
			delete(t.m, k)
			taken = append(taken, h)
		}
	}
	return taken
}

// A Releaser releases an owner's holds on a lock in Redis: the lock type
// behind a hold, for Client.Shutdown.
type Releaser interface {
	// Release releases holds holds of field, through the client's
	// scripts client, until ctx ends.
	Release(ctx context.Context, field string, holds int) error
}

// end cancels every context the hold returned, and tells the client's
// Observer. cause nil means a plain release. It is called with no lock
// held, by the one who took h out of the table.
func (h *hold) end(cause error) {
	if h.lease != nil {
		h.lease.Stop()
	}
	if h.expiry != nil {
		h.expiry.Stop()
	}
	cancelHold(h.first, h.reentries, cause)
	h.untrack()
	h.c.holdEnded(h, cause)
}

// A Grant describes a successful acquire.
type Grant struct {
	Kind string // the lock's package, for the Observer
	// Shown is the lock's name in the Observer's HoldEnded, leak reports
	// and Shutdown's errors, when it is not the hold key's (a group
	// lock's group); "" for the key's.
	Shown   string
	Sent    time.Time     // when the acquiring call was sent
	Lease   time.Duration // fixed lease; 0 means the watchdog renews
	Renewal renew.Renewal // watchdog mode: how to renew, and its Timeout the lease renewed
	Token   int64         // fencing token, 0 if none
	// Releaser, if set, releases the hold when the client shuts down.
	Releaser Releaser
	// Handoff marks a hold handed over in Redis (a release's grant),
	// which Redis counts once: it is recorded only if the owner has no
	// hold on this client yet (see ErrHoldTaken).
	Handoff bool
}

// ErrHoldTaken is Take's answer to a Handoff grant for a key that has
// a hold already: another call of the same owner took the lock first,
// and Redis counts one hold for both. The caller acquires again as a
// re-entry instead.
var ErrHoldTaken = errors.New("relock: the owner's hold was taken by another call")

// granted records an acquire for key (Take) and returns the caller's lock
// context: a child of ctx cancelled with cause ErrLockLost when the lease
// is lost and, for a fixed lease, with a deadline at the lease's end. It
// fails with ErrClosed when the client closed during the acquire; the
// caller then undoes the acquire. For an owner a Lock call made, the
// context is a handle that the hold does not reference, so that a
// forgotten Unlock is found (leak.go).
func (c *Client) granted(ctx context.Context, key HoldKey, g Grant) (context.Context, error) {
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	h := c.holds.m[key]
	fresh := h == nil
	if g.Handoff && !fresh {
		return nil, ErrHoldTaken
	}
	if fresh {
		h = &hold{c: c, kind: g.Kind, shown: g.Shown, key: key, since: time.Now()}
	}
	h.count++
	h.token = g.Token
	h.releaser = g.Releaser
	ctx, tracked := c.tracking(ctx, key)

	var lctx context.Context
	var cancel context.CancelCauseFunc
	if g.Lease > 0 {
		// The hold's expiry timer, not a deadline of the context's own,
		// ends the context: it forgets the hold first, so that when the
		// context is done the hold is over everywhere in the client. It
		// fires Config.LeaseMargin before the lease could end on the
		// server, which set it after g.Sent.
		end := g.Sent.Add(g.Lease - c.cfg.LeaseMargin)
		h.expires = end
		h.leaseEnd.Store(end.UnixNano())
		var inner context.Context
		inner, cancel = context.WithCancelCause(ctx)
		lctx = holdCtx{Context: inner, end: &h.leaseEnd}
		if h.expiry != nil {
			h.expiry.Stop()
		}
		held, lease := h, g.Lease // copies: a closure over h would move it to the heap on every call
		h.expiry = time.AfterFunc(time.Until(end), func() { held.forget(lease) })
	} else {
		lctx, cancel = context.WithCancelCause(ctx)
		if fresh {
			if err := c.watchdog.Start(&h.watch, g.Renewal, g.Sent, h); err != nil {
				cancel(ErrClosed)
				return nil, ErrClosed
			}
			h.lease = &h.watch
		}
	}
	if fresh {
		h.first = cancel
		c.holds.m[key] = h
	} else {
		h.reentries = append(h.reentries, reentry{lctx, cancel})
	}
	return c.handLocked(tracked, h, lctx), nil
}

// A reentry is a Lock call of a hold after its first: the context it
// returned (the handle's inner context, for a tracked owner, which the
// hold may keep: leak.go), and its cancel func.
type reentry struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// unlockedLocked ends one re-entry of h, whose holds an Unlock given ctx
// took one off: the one whose context ctx is, or the handle of, or else
// the latest, for ctx is then the first Lock's, one derived from a lock
// context, or another owner's context the caller made. Its context is
// cancelled with cause ErrUnlocked, which leaves it in no parent's
// children; the first Lock's lives on with the hold. holdTable.mu is
// held; cancelling takes no lock of core's.
func (h *hold) unlockedLocked(ctx context.Context) {
	n := len(h.reentries)
	if n == 0 {
		return
	}
	if hd, ok := ctx.(*handle); ok {
		ctx = hd.Context
	}
	i := n - 1
	for j, r := range h.reentries {
		if r.ctx == ctx {
			i = j
			break
		}
	}
	r := h.reentries[i]
	copy(h.reentries[i:], h.reentries[i+1:])
	h.reentries[n-1] = reentry{}
	h.reentries = h.reentries[:n-1]
	r.cancel(ErrUnlocked)
}

// cancelHold cancels the contexts of a hold's Lock calls with cause (nil:
// the owner's last Unlock, ErrUnlocked).
func cancelHold(first context.CancelCauseFunc, reentries []reentry, cause error) {
	if cause == nil {
		cause = ErrUnlocked
	}
	if first != nil {
		first(cause)
	}
	for _, r := range reentries {
		r.cancel(cause)
	}
}

// LeaseLost ends a hold whose lease the watchdog reports lost. The
// watchdog calls it from its goroutine with no lock held.
func (h *hold) LeaseLost(reason error) {
	t := &h.c.holds
	t.mu.Lock()
	if h.unlocking > 0 && h.count == 1 && t.m[h.key] == h {
		// The owner's unlock may have freed the lock: its outcome
		// decides (protocol.go).
		if h.lost == nil {
			h.lost = reason
		}
		t.mu.Unlock()
		return
	}
	t.removeLocked(h.key, h)
	t.mu.Unlock()
	h.end(fmt.Errorf("%w: %w", ErrLockLost, reason))
}

// forget drops a fixed-lease hold whose lease has ended, then cancels its
// contexts. A re-entry that extended the lease meanwhile keeps it. It is
// the expiry timer's callback, run with no lock held.
func (h *hold) forget(lease time.Duration) {
	t := &h.c.holds
	t.mu.Lock()
	if time.Now().Before(h.expires) {
		t.mu.Unlock()
		return
	}
	t.removeLocked(h.key, h)
	t.mu.Unlock()
	h.end(fmt.Errorf("%w: lease of %v, less the margin of %v, ended", ErrLockLost, lease, h.c.cfg.LeaseMargin))
}

// A holdCtx is the context of a fixed-lease hold: its deadline is the
// lease's end less the margin (the latest, after a re-entry extended
// it), or its parent's when that is earlier, and the hold's expiry timer
// cancels it then, after forgetting the hold.
type holdCtx struct {
	context.Context
	end *atomic.Int64 // Unix ns
}

func (c holdCtx) Deadline() (time.Time, bool) {
	end := time.Unix(0, c.end.Load())
	if d, ok := c.Context.Deadline(); ok && d.Before(end) {
		return d, true
	}
	return end, true
}

// released records an unlock, given ctx, whose script reported
// remaining = true (holds remain) or false (the lock is released): when
// local holds remain, the Lock call whose context ctx is ends, its
// context cancelled with cause ErrUnlocked, or the latest re-entry when
// ctx is none of the hold's re-entries (unlockedLocked).
func (c *Client) released(ctx context.Context, key HoldKey, remaining bool) {
	h := c.holds.drop(ctx, key, remaining)
	switch {
	case h == nil:
	case remaining:
		// Redis counts a hold this owner never took: an acquire run
		// twice (a retry after a lost reply), or one whose reply and
		// undo were both lost. Renewing it would keep the lock for
		// ever; it is left to expire instead.
		h.end(fmt.Errorf("%w: Redis counts more holds than were taken (a lost reply); the lease is left to run out", ErrLockLost))
	case h.count > 1:
		// The lock is gone while holds remain: an unlock run twice.
		h.end(fmt.Errorf("%w: released with holds left (an unlock retried after a lost reply)", ErrLockLost))
	default:
		h.end(nil)
	}
}

// unlockFailed records an unlock Redis did not answer (protocol.go):
// one local hold goes, and after the last the lock's contexts are
// cancelled with cause ErrUnlocked.
func (c *Client) unlockFailed(key HoldKey, err error) {
	if h := c.holds.drop(context.Background(), key, true); h != nil {
		h.end(fmt.Errorf("%w, but Redis did not confirm it (%v): the lock is released in the background once Redis answers, or when its lease runs out", ErrUnlocked, err))
	}
}

// drop takes one hold off key's record, for an Unlock given ctx, when
// keep is set and it has more than one, ending that hold's re-entry
// (unlockedLocked); otherwise it takes the record out of the table and
// returns it, for the caller to end. It returns nil when key has no
// record or keeps one.
func (t *holdTable) drop(ctx context.Context, key HoldKey, keep bool) *hold {
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.m[key]
	if h == nil {
		return nil
	}
	if keep && h.count > 1 {
		h.count--
		h.unlockedLocked(ctx)
		return nil
	}
	delete(t.m, key)
	return h
}

// lost ends the local holds on name of field's owner (every owner's for
// "") with ErrLockLost: the unlock script found no hold. A force-unlock's
// are ended by ForceUnlocked (notice.go).
func (c *Client) lost(name string, field string) {
	for _, h := range c.holds.removeIf(name, func(f string) bool { return field == "" || f == field }) {
		h.end(fmt.Errorf("%w: lock released by someone else or expired", ErrLockLost))
	}
}

// Token returns the fencing token of key's current hold.
func (c *Client) Token(key HoldKey) (int64, bool) {
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	h := c.holds.m[key]
	if h == nil {
		return 0, false
	}
	return h.token, true
}

// Holds reports how many local holds key has.
func (c *Client) Holds(key HoldKey) int {
	c.holds.mu.Lock()
	defer c.holds.mu.Unlock()
	if h := c.holds.m[key]; h != nil {
		return h.count
	}
	return 0
}

// Holding reports whether key has a local hold.
func (c *Client) Holding(key HoldKey) bool { return c.Holds(key) > 0 }
