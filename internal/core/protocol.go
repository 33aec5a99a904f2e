package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The hold protocol: the one sequence by which every primitive that
// holds something (a lock of internal/hashlock, a RedLock's master, a
// permit) takes and gives back a hold, each step given what differs
// between them: the attempt's script, its renewal (Grant), its undo.
// Its reasons are stated here, and the steps refer here.
//
// An acquire attempt begins (BeginAttempt) once the clean-ups of its
// hold key under way in the background (Detach) are done: the undo of
// the owner's last attempt, or the resent unlock of its last hold, would
// otherwise undo this attempt's hold. It carries a number, which an undo
// or a give-up records as given up before it removes anything (Bury,
// late.go: a reply lost may still run after them), and the time it was
// sent, on which the lease bound rests: the server sets the lease after
// it. A granted attempt is recorded (Take) in the hold table, which
// starts its renewal, and the client then listens for force-unlock
// notices from its first hold on (which also tells an operator's doctor
// that the holder lives); one that cannot be recorded (the client
// closed) is undone by its primitive, as one whose reply was lost.
//
// An unlock marks its hold before its script is sent (BeginUnlock): a
// renewal that runs right after the script freed the lock finds it
// gone, and must not end an unlocked hold as lost; the unlock's outcome
// decides (Unlocking.Done). An unlock Redis did not answer takes its
// local hold anyway, and the last one's lease is left to run out rather
// than renewed for an owner that let go.

// An Attempt is one acquire attempt of the protocol.
type Attempt struct {
	Number int64     // the attempt's number, an argument of its script
	Sent   time.Time // an instant before it was sent
}

// BeginAttempt begins an attempt on key's hold once key's clean-ups in
// the background are done, or fails with ctx's cause.
func (c *Client) BeginAttempt(ctx context.Context, key HoldKey) (Attempt, error) {
	if err := c.AwaitPending(ctx, key); err != nil {
		return Attempt{}, err
	}
	return Attempt{Number: c.nextAttempt(), Sent: time.Now()}, nil
}

// Take records a granted acquire of key's hold (granted), returning the
// lock context derived from ctx, and has the client listen for
// force-unlock notices. When the hold cannot be recorded, it calls undo,
// with which the caller undoes the acquire, and returns the error; but
// not for ErrHoldTaken, where the caller's owner holds what was granted.
func (c *Client) Take(ctx context.Context, key HoldKey, g Grant, undo func()) (context.Context, error) {
	lctx, err := c.granted(ctx, key, g)
	if err != nil {
		if !errors.Is(err, ErrHoldTaken) {
			undo()
		}
		return nil, err
	}
	c.listen()
	return lctx, nil
}

// Untake takes back a hold that Take recorded and whose acquire the
// caller undoes in Redis: reentry tells that Redis counted holds of the
// owner before the acquire, which keep the hold.
func (c *Client) Untake(key HoldKey, reentry bool) {
	c.released(context.Background(), key, reentry)
}

// An Unlocking is an unlock of the protocol under way (BeginUnlock).
// The caller records its outcome with Done and defers End.
type Unlocking struct {
	c     *Client
	key   HoldKey
	h     *hold // the hold whose last local hold is being unlocked, or nil
	holds int   // the key's local holds when the unlock began
}

// BeginUnlock begins an unlock of key's hold, before its script is sent.
func (c *Client) BeginUnlock(key HoldKey) Unlocking {
	u := Unlocking{c: c, key: key}
	t := &c.holds
	t.mu.Lock()
	defer t.mu.Unlock()
	h := t.m[key]
	switch {
	case h == nil:
	case h.count != 1:
		u.holds = h.count
	default:
		h.unlocking++
		u.h, u.holds = h, 1
	}
	return u
}

// Holds reports how many local holds the key had when the unlock began.
func (u Unlocking) Holds() int { return u.holds }

// Done records the outcome of the unlock's script, given ctx: err, no
// answer (one local hold goes, and the last one's contexts are cancelled
// with cause ErrUnlocked); reply nil, no hold in Redis (the owner's
// local holds on the lock end with ErrLockLost); an int64, one hold
// released, 0 telling that holds remain in Redis (released). It reports
// whether a hold was released, and returns err, or an error for another
// reply, which it does not record.
func (u Unlocking) Done(ctx context.Context, reply any, err error) (bool, error) {
	c := u.c
	if err != nil {
		c.unlockFailed(u.key, err)
		return false, err
	}
	if reply == nil {
		c.lost(u.key.Name, u.key.Field)
		return false, nil
	}
	n, ok := reply.(int64)
	if !ok {
		return false, fmt.Errorf("unexpected reply %v", reply)
	}
	c.released(ctx, u.key, n == 0)
	return true, nil
}

// End ends the unlock: a loss its hold's lease reported meanwhile ends
// the hold now, unless Done's outcome ended it already.
func (u Unlocking) End() {
	h := u.h
	if h == nil {
		return
	}
	t := &u.c.holds
	t.mu.Lock()
	h.unlocking--
	lost := h.lost
	if h.unlocking > 0 || lost == nil || !t.removeLocked(h.key, h) {
		t.mu.Unlock()
		return
	}
	h.lost = nil
	t.mu.Unlock()
	h.end(fmt.Errorf("%w: %w", ErrLockLost, lost))
}
