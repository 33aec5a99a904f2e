package transport

import (
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/derive"
)

// scriptClient returns the client relock sends its acquire scripts
// through, and how to close it: one with go-redis's retries off
// (MaxRetries -1, which go-redis keeps as 0) that honours context
// deadlines (ContextTimeoutEnabled). That is rdb itself when it is
// configured so, otherwise a copy of it of relock's own, whose commands
// go through the caller's hooks (derive.Unless). A client of another
// kind is used as it is.
//
// go-redis sends a command again when its connection fails before the
// reply (io.EOF, a timeout), after the server may have run it; an acquire
// run twice counts a hold nobody owns. With retries off a lost reply is
// an error, which the acquire loop handles: it undoes the acquire and
// tries again. Unlocks go through it too, on the connections the owner's
// acquires warmed (a Lock's context may be done by its Unlock, which then
// has core.Grace, no time for a dial): one whose reply is lost ends the
// hold locally, and the last hold's is sent again in the background
// (hashlock's Unlock), safe since it finds nothing the second time. The
// other scripts keep relock's call client (callClient) and the caller's
// retries: renewals, give-ups and force-unlocks are safe to repeat.
func scriptClient(rdb redis.UniversalClient) (redis.UniversalClient, func() error) {
	return derive.Unless(rdb, derive.Settings{NoRetries: true, HonourDeadline: true}, func(retries int, deadlines bool) bool {
		return retries <= 0 && deadlines
	})
}

// callClient returns the client relock sends its other calls through
// (give-ups, state queries, the watchdog's renewals), and how
// to close it: rdb itself when it cuts calls off at their context's
// deadline (ContextTimeoutEnabled), otherwise a copy of it of relock's
// own that does, with rdb's retries. Without that, a call's read waits
// out the client's ReadTimeout (and each retry another) whatever the
// caller's deadline: a Lock given one second took twenty against a
// server that accepted connections and never answered.
func callClient(rdb redis.UniversalClient) (redis.UniversalClient, func() error) {
	return derive.Unless(rdb, derive.Settings{HonourDeadline: true}, func(_ int, deadlines bool) bool {
		return deadlines
	})
}
