package hashlock

import (
	"context"
	"time"

	"github.com/relock-go/relock/internal/transport"
)

// IsLocked reports whether anyone holds the lock.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	if err := l.Check(ctx); err != nil {
		return false, err
	}
	n, err := l.C.Redis.Exists(ctx, l.Name).Result()
	if err != nil {
		return false, l.errorf("is locked", err)
	}
	return n == 1, nil
}

// IsHeld reports whether ctx's owner holds the lock, as Redis sees it.
func (l *Lock) IsHeld(ctx context.Context) (bool, error) {
	n, err := l.HoldCount(ctx)
	return n > 0, err
}

// HoldCount returns the holds of ctx's owner as Redis counts them.
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	if err := l.Check(ctx); err != nil {
		return 0, err
	}
	key, ok := l.Key(ctx)
	if !ok {
		return 0, nil
	}
	n, _, err := transport.OptionalInt(l.C.Redis.HGet(ctx, l.Name, key.Field))
	if err != nil {
		return 0, l.errorf("hold count", err)
	}
	return int(n), nil
}

// TTL returns the time left on the lease: 0 when the lock is not held,
// -1 when it is held without expiry.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	if err := l.Check(ctx); err != nil {
		return 0, err
	}
	ms, err := l.C.Redis.Do(ctx, "PTTL", l.Name).Int64()
	if err != nil {
		return 0, l.errorf("ttl", err)
	}
	switch {
	case ms == -2:
		return 0, nil
	case ms < 0:
		return -1, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}
