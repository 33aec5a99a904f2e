// Package derive makes relock's own go-redis clients from a caller's:
// the one place where such a copy is built, so that every copy leaves
// alone the state the original built for itself.
package derive

import (
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Settings are the options a derived client may change; the rest are
// the original's. Zero durations keep the original's.
type Settings struct {
	NoRetries      bool // go-redis never resends a command (MaxRetries -1)
	HonourDeadline bool // calls are cut off at their context's deadline (ContextTimeoutEnabled)
	DialTimeout    time.Duration
	ReadTimeout    time.Duration
	WriteTimeout   time.Duration
}

// Client returns a new client with o's options changed by s, which the
// caller closes. State the original client built for itself is not
// shared: the copy makes its own push processor, has no client-side cache
// and no maintenance notifications (the original updates its settings
// for those while in use). The caller's hooks are not copied (Unless
// makes them see the copy's commands).
func Client(o *redis.Options, s Settings) *redis.Client {
	cp := *o
	s.apply(&cp.MaxRetries, &cp.ContextTimeoutEnabled, &cp.DialTimeout, &cp.ReadTimeout, &cp.WriteTimeout)
	cp.PushNotificationProcessor = nil
	cp.ClientSideCache, cp.ClientSideCacheConfig = nil, nil
	cp.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClient(&cp)
}

// Cluster is Client for a cluster client's options.
func Cluster(o *redis.ClusterOptions, s Settings) *redis.ClusterClient {
	cp := *o
	s.apply(&cp.MaxRetries, &cp.ContextTimeoutEnabled, &cp.DialTimeout, &cp.ReadTimeout, &cp.WriteTimeout)
	cp.PushNotificationProcessor = nil
	cp.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return redis.NewClusterClient(&cp)
}

func (s Settings) apply(retries *int, deadline *bool, dial, read, write *time.Duration) {
	if s.NoRetries {
		*retries = -1
	}
	if s.HonourDeadline {
		*deadline = true
	}
	set(dial, s.DialTimeout)
	set(read, s.ReadTimeout)
	set(write, s.WriteTimeout)
}

// set sets *dst to v unless v is zero.
func set(dst *time.Duration, v time.Duration) {
	if v != 0 {
		*dst = v
	}
}

// Unless returns a copy of rdb with s applied, and its Close, unless
// keep reports that rdb's options already serve (then rdb itself and a
// no-op). The copy's commands go through rdb's hooks (see forward.go):
// Unless adds a hook to rdb for that. A client that is neither a
// *redis.Client nor a *redis.ClusterClient is used as it is.
func Unless(rdb redis.UniversalClient, s Settings, keep func(maxRetries int, deadlines bool) bool) (redis.UniversalClient, func() error) {
	var cp redis.UniversalClient
	switch c := rdb.(type) {
	case *redis.Client:
		if o := c.Options(); !keep(o.MaxRetries, o.ContextTimeoutEnabled) {
			cp = Client(o, s)
		}
	case *redis.ClusterClient:
		if o := c.Options(); !keep(o.MaxRetries, o.ContextTimeoutEnabled) {
			cp = Cluster(o, s)
		}
	}
	if cp == nil {
		return rdb, func() error { return nil }
	}
	forward(rdb, cp)
	return cp, cp.Close
}

// Deadlines returns rdb when it cuts calls off at their context's
// deadline (ContextTimeoutEnabled), otherwise a copy that does, which the
// caller closes after its calls. Unlike Unless it adds no hook to rdb, so
// rdb's hooks do not see the copy's commands: it is for the occasional
// calls of an inspection, made on a client relock does not keep, where a
// hook added per call would pile up on the caller's client.
func Deadlines(rdb redis.UniversalClient) (redis.UniversalClient, func() error) {
	s := Settings{HonourDeadline: true}
	switch c := rdb.(type) {
	case *redis.Client:
		if o := c.Options(); !o.ContextTimeoutEnabled {
			cp := Client(o, s)
			return cp, cp.Close
		}
	case *redis.ClusterClient:
		if o := c.Options(); !o.ContextTimeoutEnabled {
			cp := Cluster(o, s)
			return cp, cp.Close
		}
	}
	return rdb, func() error { return nil }
}
