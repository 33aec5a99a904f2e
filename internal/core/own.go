package core

import "github.com/redis/go-redis/v9"

// scriptClient returns the client relock runs its scripts through, and
// how to close it.
//
// A lock script must run at most once per call: go-redis by default
// sends a command again when its connection fails before the reply (an
// io.EOF or a timeout), after the server may have run it, and a hold
// counted twice is a lock never released. So scripts go through a client
// with retries off (MaxRetries -1, which go-redis keeps as 0) that also
// honours context deadlines (ContextTimeoutEnabled), for per-call
// timeouts: rdb itself when it is configured so, otherwise a copy of it
// of relock's own (which the caller's hooks do not see). A client of
// another kind is used as it is. Renewals, which are safe to repeat, keep
// the watchdog's client and its retries.
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
			n := redis.NewClient(&cp)
			return n, n.Close
		}
	case *redis.ClusterClient:
		if o := c.Options(); o.MaxRetries > 0 || !o.ContextTimeoutEnabled {
			cp := *o
			cp.MaxRetries, cp.ContextTimeoutEnabled = -1, true
			cp.PushNotificationProcessor = nil
			n := redis.NewClusterClient(&cp)
			return n, n.Close
		}
	}
	return rdb, func() error { return nil }
}
