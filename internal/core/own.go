package core

import (
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// scriptClient returns the client relock sends its acquire scripts
// through, and how to close it: one with go-redis's retries off
// (MaxRetries -1, which go-redis keeps as 0) that honours context
// deadlines (ContextTimeoutEnabled). That is rdb itself when it is
// configured so, otherwise a copy of it of relock's own, which the
// caller's hooks do not see. A client of another kind is used as it is.
//
// go-redis sends a command again when its connection fails before the
// reply (io.EOF, a timeout), after the server may have run it; an acquire
// run twice counts a hold nobody owns. With retries off a lost reply is
// an error, which the acquire loop handles: it undoes the acquire and
// tries again. The other scripts keep the caller's client and its retries:
// renewals, give-ups and force-unlocks are safe to repeat, and an unlock
// run twice is caught at the owner's next Unlock (see Client.Released),
// while turning retries off there would fail an unlock on every pooled
// connection the server had closed.
func scriptClient(rdb redis.UniversalClient) (redis.UniversalClient, func() error) {
	switch c := rdb.(type) {
	case *redis.Client:
		if o := c.Options(); o.MaxRetries > 0 || !o.ContextTimeoutEnabled {
			cp := *o
			cp.MaxRetries, cp.ContextTimeoutEnabled = -1, true
			// State the original client built for itself must not be
			// shared: the copy makes its own push processor and needs no
			// client-side cache.
			cp.PushNotificationProcessor = nil
			cp.ClientSideCache, cp.ClientSideCacheConfig = nil, nil
			// The original updates its maintenance-notification settings
			// while in use; the copy gets its own, off.
			cp.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
			n := redis.NewClient(&cp)
			return n, n.Close
		}
	case *redis.ClusterClient:
		if o := c.Options(); o.MaxRetries > 0 || !o.ContextTimeoutEnabled {
			cp := *o
			cp.MaxRetries, cp.ContextTimeoutEnabled = -1, true
			cp.PushNotificationProcessor = nil
			cp.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
			n := redis.NewClusterClient(&cp)
			return n, n.Close
		}
	}
	return rdb, func() error { return nil }
}
