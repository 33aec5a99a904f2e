// Package registry is a waiter's side of relock's registry of a
// semaphore's waiters (internal/lua/semaphore_prelude.lua), for the
// waits of packages semaphore and permits.
package registry

import (
	"context"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
	"github.com/relock-go/relock/internal/wait"
)

// A Semaphore is a semaphore as its waiters reach its registry: a
// semaphore of package semaphore or permits keeps one, set by Init and
// read-only after, which each of its waiters points to.
type Semaphore struct {
	c    *core.Client
	keys []string // the semaphore's KEYS, as the give-up script takes them
}

// Init sets s up for the semaphore on c whose KEYS are keys
// (semaphore_prelude.lua's: keys[0] its name, keys[1] the shared
// channel).
func (s *Semaphore) Init(c *core.Client, keys []string) { s.c, s.keys = c, keys }

// Waiter returns the waiter of a wait tagged tag wanting want permits
// (a decimal).
func (s *Semaphore) Waiter(tag, want string) Waiter {
	return Waiter{s: s, Member: s.c.ID + ":" + tag + ":" + want, Reg: int64(0)}
}

// A Waiter is one wait's place in a semaphore's registry. The wait
// listens on its client's channel for the semaphore, under its tag,
// where a release that may satisfy it wakes it; while it is the
// semaphore's watcher ("<tag>:w", or an attempt's reply), also on the
// shared channel, where Redisson's releases are published. Member is
// read-only (Leave may run in the background); the rest is used by the
// wait loop's goroutine only.
type Waiter struct {
	s      *Semaphore
	Member string // its registry member, "<client id>:<tag>:<permits wanted>"
	// Reg is the waiter's registration time, as the last reply gave it,
	// which each attempt passes back; -1 when an attempt whose reply was
	// lost may have registered it (the next attempt looks).
	Reg any
	// listened: an attempt ran listening, so the waiter may be
	// registered, and leaves the registry when it gives up.
	listened bool
	// watch: the waiter is the watcher; watching: the wait loop was told
	// to listen on the shared channel (wait.Outcome.Also).
	watch, watching bool
}

// Watch reports whether an attempt is to end before its script runs,
// with o: an appointed watcher listens on the shared channel first, and
// then (the wait loop tries again at once) looks.
func (w *Waiter) Watch() (o wait.Outcome, ok bool) {
	if w.watch && !w.watching {
		w.watching = true
		return wait.Outcome{TTL: -1, Also: w.s.keys[1]}, true
	}
	return wait.Outcome{}, false
}

// Try records an attempt about to run its script, listening or not: a
// listening one may register the waiter.
func (w *Waiter) Try(listening bool) { w.listened = w.listened || listening }

// Wait reads the reply of an attempt that took nothing (lua.ParseWait).
func (w *Waiter) Wait(reply any) (wait.Outcome, error) {
	r, err := lua.ParseWait(reply)
	if err != nil {
		return wait.Outcome{}, err
	}
	w.Reg = r.Registered
	w.watch = w.watch || r.Watcher
	o := wait.Outcome{TTL: r.Sleep}
	if w.watch {
		w.watching = true
		o.Also = w.s.keys[1]
	}
	return o, nil
}

// Note reads a wake-up's note: "w" appoints the waiter watcher.
func (w *Waiter) Note(note string) {
	if note == "w" {
		w.watch = true
	}
}

// GiveUp takes a waiter that may be registered out of the registry,
// passing on what a release handed or woke it for and its watcher's
// role, bounded by core.Client.Settle.
func (w *Waiter) GiveUp(ctx context.Context) error {
	if !w.listened {
		return nil
	}
	return w.s.c.Settle(ctx, w.Key(), w.Leave)
}

// Leave runs the give-up script once (internal/lua/semaphore_give_up.lua).
func (w *Waiter) Leave(ctx context.Context) error {
	c := w.s.c
	_, err := transport.Eval(ctx, c.Redis, lua.SemaphoreGiveUp(), w.s.keys, c.T.PublishArg(), w.Member)
	return err
}

// Key is the hold key of the waiter's clean-ups (core.Client.Detach).
func (w *Waiter) Key() core.HoldKey {
	return core.HoldKey{Name: w.s.keys[0], Field: w.Member}
}
