package core

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// Forgotten unlocks. A hold lives in the client's holdTable, and the watchdog
// renews it until it ends, so a lock whose holder dropped its context
// without an Unlock would be renewed for ever. To catch that, the hold
// must not keep what it returned reachable: a Lock call returns a handle,
// a thin context around the hold's own context, and the hold keeps only
// that inner context's cancel func. When the Lock call made the owner
// (LockOwner), no context but the handles of the owner's holds (and
// contexts derived from them, which point at them) carries it: once
// every handle is unreachable, nobody can ever unlock those holds. A
// cleanup on each handle (runtime.AddCleanup) counts them down; the last
// one reports the owner's holds and ends them here, without unlocking
// them in Redis: their renewal stops and their leases run out.
//
// Why not unlock them: the hold's work may still be running in a
// goroutine that no longer refers to the context (it was dropped, not
// finished); letting the lease run out keeps it exclusive for one more
// lease, as a crashed holder's lock would be, where an unlock would let
// another owner in at once.
//
// What keeps a handle reachable keeps its owner's holds from being
// reported: a child context of it that is not cancelled (the inner
// context's children point at the child, whose parent is the handle), or
// a nested Lock given such a child rather than the handle itself (the
// nested hold's inner context has that child as parent until it ends).
// An owner that the caller's context carried already (WithNewOwner, a
// MultiLock's or a RedLock's) may be in contexts the caller keeps, so its
// holds are never reported. And nothing is reported before a garbage
// collection finds the handles unreachable.

// A tracker counts the handles of a tracked owner's holds, and lists the
// holds that their loss would leave nobody able to unlock. Its zero value
// tracks nothing.
type tracker struct {
	on bool // the owner is tracked: set when it is made, read-only after

	// mu guards the fields below, and each tracked hold's owner and
	// stack. It is taken under holdTable.mu (handLocked) or alone.
	//
	// Nothing here grows with a hold's re-entries: a handle is counted,
	// and its cleanup, kept by the runtime, not here, runs when a
	// collection finds it unreachable, after the owner's holds ended
	// too (done: it then does nothing). A handle whose Lock was
	// unlocked still counts until it is collected: whoever holds it can
	// still unlock the owner's other holds with it.
	mu      sync.Mutex
	done    bool // every hold ended, or every handle went: no more tracking
	handles int  // handles not yet collected
	holds   []*hold
	// firstHold backs holds up to its first element: most owners hold
	// one lock, and then track it without allocating a slice.
	firstHold [1]*hold
}

// A handle is the context a tracked hold returns: the hold's inner
// context, which the hold's ends cancel, and nothing else. The hold
// does not reference it; a cleanup (handleGone) is attached to it.
// Embedding forwards Deadline, Done, Err and Value, so context.Cause and
// the children that context.WithCancel registers work as on the inner
// context.
type handle struct {
	context.Context
}

func (h *handle) String() string { return fmt.Sprint(h.Context) + ".WithLock" }

// leakStack bounds the frames recorded of a Lock call (LeakStacks).
const leakStack = 32

// tracking returns the owner ctx carries when it is tracked and key is
// one of its holds, with ctx unwrapped to its inner context when ctx is
// a handle: a re-entry's context must not point at the handle it was
// given (the inner context cancels and answers alike), or that handle
// would stay reachable from the hold as long as it lasts. It returns nil
// for an owner that is not tracked, and ctx as it is.
func (c *Client) tracking(ctx context.Context, key HoldKey) (context.Context, *owner) {
	o, ok := ctx.Value(ownerKey{}).(*owner)
	if !ok || !o.track.on {
		return ctx, nil
	}
	field, _, _ := c.FieldFrom(ctx)
	if !strings.HasPrefix(key.Field, field) || len(key.Field) > len(field) && key.Field[len(field)] != ':' {
		return ctx, nil // not the owner's hold: a permit's
	}
	if hd, ok := ctx.(*handle); ok {
		ctx = hd.Context
	}
	return ctx, o
}

// handLocked returns lctx, a context h returns, as a handle of o's when
// o is tracked, recording h among o's holds when it is fresh. It is
// called with c.holds.mu held.
func (c *Client) handLocked(o *owner, h *hold, lctx context.Context) context.Context {
	if o == nil {
		return lctx
	}
	t := &o.track
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return lctx
	}
	if h.owner == nil {
		h.owner = o
		if t.holds == nil {
			t.holds = t.firstHold[:0]
		}
		t.holds = append(t.holds, h)
		if c.cfg.LeakStacks {
			pcs := make([]uintptr, leakStack)
			h.stack = pcs[:runtime.Callers(3, pcs)]
		}
	}
	hd := &handle{lctx}
	t.handles++
	runtime.AddCleanup(hd, handleGone, o)
	return hd
}

// untrack drops h from its owner's holds; after the last, the owner's
// handles' cleanups do nothing. It is called as h ends, with no lock
// held.
func (h *hold) untrack() {
	if h.owner == nil {
		return
	}
	t := &h.owner.track
	t.mu.Lock()
	defer t.mu.Unlock()
	if i := slices.Index(t.holds, h); i >= 0 {
		t.holds = slices.Delete(t.holds, i, i+1)
	}
	if len(t.holds) > 0 || t.done {
		return
	}
	t.done = true
}

// handleGone is the cleanup of a handle of o's: after the last one, the
// holds of o that are left can never be unlocked, and are reported. The
// runtime runs it with no lock held.
func handleGone(o *owner) {
	t := &o.track
	t.mu.Lock()
	if t.handles--; t.handles > 0 || t.done {
		t.mu.Unlock()
		return
	}
	t.done = true
	holds := t.holds
	t.holds = nil
	t.mu.Unlock()
	for _, h := range holds {
		h.c.leaked(h)
	}
}

// leaked ends h, whose Lock calls' contexts all became unreachable, and
// reports it: a warning, and the Observer's HoldEnded with ErrLeaked. It
// runs in the background (a cleanup must not block): after Shutdown
// began, the hold is Shutdown's to end. Its record stays in Redis until
// its lease runs out, or until Shutdown releases it (holdTable.leaked).
func (c *Client) leaked(h *hold) {
	c.Background(func() {
		c.holds.mu.Lock()
		if h.unlocking > 0 || !c.holds.removeLocked(h.key, h) {
			// Ended meanwhile, or an Unlock of it is under way (the
			// handle it was given went unreachable during the call),
			// whose outcome ends it.
			c.holds.mu.Unlock()
			return
		}
		holds := h.count
		until := time.Now().Add(c.WatchdogTimeout)
		if end := h.leaseEnd.Load(); end != 0 {
			until = time.Unix(0, end) // a fixed lease's end
		}
		if h.releaser != nil {
			c.holds.addLeakedLocked(h, until)
		}
		c.holds.mu.Unlock()
		h.end(ErrLeaked)
		args := []any{"lock", h.name(), "kind", h.kind, "owner", h.key.Field, "held", time.Since(h.since).Round(time.Millisecond), "holds", holds}
		if h.stack != nil {
			args = append(args, "stack", formatStack(h.stack))
		}
		c.cfg.Log.Warn(ErrLeaked.Error(), args...)
	})
}

// formatStack renders the frames of a Lock call, from the lock type's
// Lock method out, as a panic does: function, then file:line.
func formatStack(pcs []uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "github.com/relock-go/relock/internal/") && f.Function != "runtime.goexit" {
			fmt.Fprintf(&b, "%s\n\t%s:%d\n", f.Function, f.File, f.Line)
		}
		if !more {
			break
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
