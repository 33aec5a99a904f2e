package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/renew"
)

// Force-unlock notices: what a holder is told and when, and their limits,
// are stated once, in docs/wire-layout.md ("Force-unlock notices"). In
// short: the force-unlock scripts reply the holders' fields, read in the
// same atomic step as the deletion; the forcing client publishes the
// lock's name on the channel of each other relock client among them
// (layout.ClientChannel, ForceUnlocked); a client listens there from its
// first hold on (listen) and has each of its holds on that lock checked
// in Redis rather than ended (notice): the notice is only a hint, which
// may come late or from anyone, and Redis has the last word.
//
// One channel per client, not per held lock: a client holding 10,000
// locks keeps one subscription, and a hold costs no SUBSCRIBE. The cost
// is that the channel is in a slot of its own, so on a cluster with
// sharded pub/sub the script, which may publish only in its keys' slot,
// cannot publish the notice: the forcing client does, after the script.

// The reasons a hold ends when its lock is force-unlocked, after
// ErrLockLost in the cause.
var (
	errForcedHere  = errors.New("force-unlocked by this client (ForceUnlock)")
	errForcedThere = errors.New("force-unlocked by another client (ForceUnlock), which told this one")
)

// notices is whether the client listens on its channel
// (layout.ClientChannel).
type notices struct {
	listening atomic.Bool // listen began, and has not failed since
}

// listen has the client listen on its channel for notices, once: the
// first call subscribes in the background and returns at once, so that
// an acquire never waits for it; later calls return at once. A subscription that
// could not be made (the hub closed, or the cluster layout could not be
// read within OpTimeout) is tried again at the next call. It may be
// called only after Check or Begin returned nil.
func (c *Client) listen() {
	n := &c.notices
	if n.listening.Load() || !n.listening.CompareAndSwap(false, true) {
		return
	}
	h := c.Hub()
	started := c.Background(func() {
		ctx, cancel := c.BackgroundContext(context.Background())
		defer cancel()
		if err := h.Listen(ctx, layout.ClientChannel(c.ID), hub.WakeOne, c.notice); err != nil {
			n.listening.Store(false)
		}
	})
	if !started {
		n.listening.Store(false)
	}
}

// notice handles a message on the client's channel, name being a lock
// that a ForceUnlock on another client deleted. It is the hub's callback,
// called on its delivery goroutine with no lock held, and does not block: each
// of the client's holds on name is checked in Redis in the background. A
// watchdog-renewed hold's lease is renewed now (renew.Lease.Check),
// and the watchdog reports it lost if the renewal finds it gone, which
// ends the hold with ErrLockLost; a fixed-lease hold, which must not be
// renewed, is read (verify).
func (c *Client) notice(name string) {
	type check struct {
		key   HoldKey
		h     *hold
		lease *renew.Lease
		count int
	}
	var checks []check
	c.holds.mu.Lock()
	for key, h := range c.holds.m {
		if key.Name == name {
			checks = append(checks, check{key, h, h.lease, h.count})
		}
	}
	c.holds.mu.Unlock()
	for _, ch := range checks {
		if ch.lease != nil {
			ch.lease.Check(errForcedThere)
			continue
		}
		c.verify(ch.key, ch.h, ch.count)
	}
}

// verify ends the fixed-lease hold h of key, which had count holds when
// its notice came, if the owner's field is gone from the lock's hash.
// The read runs in the background, bounded by OpTimeout; when it fails
// the hold stays, and its lease bounds it. A hold whose count changed
// meanwhile stays too: the owner took the lock again (or released it),
// perhaps after the read.
func (c *Client) verify(key HoldKey, h *hold, count int) {
	c.Background(func() {
		ctx, cancel := c.BackgroundContext(context.Background())
		defer cancel()
		held, err := c.Redis.HExists(ctx, key.Name, key.Field).Result()
		if err != nil || held {
			return
		}
		c.holds.mu.Lock()
		if c.holds.m[key] != h || h.count != count {
			c.holds.mu.Unlock()
			return
		}
		delete(c.holds.m, key)
		c.holds.mu.Unlock()
		h.end(fmt.Errorf("%w: %w", ErrLockLost, errForcedThere))
	})
}

// ForceUnlocked records a force-unlock of the lock name by this client,
// fields being the holders it deleted (transport.Forced): the client's own holds on
// name end with ErrLockLost at once, and every other relock client among
// the holders is sent a notice on its channel, within ctx's deadline or
// Grace past its end (the lock is gone either way). Redisson's
// holders (version-4 UUIDs) cannot listen, and are not told. A notice
// that cannot be sent is logged: its holders learn at their next renewal.
func (c *Client) ForceUnlocked(ctx context.Context, name string, fields []string) {
	for _, h := range c.holds.removeIf(name, func(string) bool { return true }) {
		h.end(fmt.Errorf("%w: %w", ErrLockLost, errForcedHere))
	}

	ids := make(map[string]bool)
	for _, f := range fields {
		if id, ok := relockClient(f); ok && id != c.ID {
			ids[id] = true
		}
	}
	if len(ids) == 0 {
		return
	}
	cctx, cancel := c.CleanupContext(ctx)
	defer cancel()
	_, err := c.Redis.Pipelined(cctx, func(pipe redis.Pipeliner) error {
		for id := range ids {
			if c.T.Publish() == "SPUBLISH" {
				pipe.SPublish(cctx, layout.ClientChannel(id), name)
			} else {
				pipe.Publish(cctx, layout.ClientChannel(id), name)
			}
		}
		return nil
	})
	if err != nil && c.cfg.Log != nil {
		c.cfg.Log.Warn("relock: force-unlock could not tell the holders' clients; they learn at their next renewal",
			"lock", name, "clients", len(ids), "error", err)
	}
}

// relockClient returns the client ID that an owner field begins with,
// "<id>:<owner>" or a writer's "<id>:<owner>:write", if it is a relock
// client's: a version-8 UUID (Redisson's are version 4).
func relockClient(field string) (string, bool) {
	if len(field) < 38 || field[36] != ':' {
		return "", false
	}
	id := field[:36]
	u, err := uuid.Parse(id)
	return id, err == nil && u.Version() == 8
}
