package core

import (
	"context"
	"time"

	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// A command whose reply was lost (a deadline cut the read, the
// connection dropped) may still run on the server, after anything sent
// since on another connection: Redis orders nothing across connections.
// An acquire attempt whose reply was lost may so run after the undo or
// the give-up sent for it, and take the lock, join a queue or register
// a waiter for a call that has returned. Each attempt therefore carries
// a number (nextAttempt), and before its undo or give-up a call records
// the highest number it gave up in relock's record of given-up attempts
// (Bury, layout.LockGone); an acquire script finds a late attempt there
// (relock_prelude.lua's late) and changes nothing. The undo that follows
// the record removes what an attempt that ran before it left. Either
// order therefore leaves nothing. Each entry of the record lasts the
// lease a late attempt would set and no longer (lua.Bury, with its index
// layout.LockGoneDue), so the record holds about the give-ups of one
// lease, however long they go on. docs/guarantees.md states the bound.

// nextAttempt returns a number for an acquire attempt: above every
// number the client gave before, so that a record of given-up attempts
// never makes a later attempt of the same owner late. It is an argument
// of the acquire scripts.
func (c *Client) nextAttempt() int64 { return c.attempts.Add(1) }

// Bury records in gone, relock's record of given-up attempts of a lock,
// that field's attempts numbered up to last were given up, for ttl:
// at least the lease a late attempt would set. due is the record's index
// of when its entries may go (layout.LockGoneDue of the same name). Send
// the undo of those attempts only once Bury returned nil: an attempt that
// runs before the record then is undone, and one that runs after it is
// late.
func (c *Client) Bury(ctx context.Context, gone, due, field string, last int64, ttl time.Duration) error {
	_, err := transport.Eval(ctx, c.Redis, lua.Bury(), []string{gone, due}, field, last, max(transport.Millis(ttl), 1))
	return err
}
