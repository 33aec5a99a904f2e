package reentrant

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock/internal/core"
)

// IsLocked reports whether anyone holds the lock.
func (m *Mutex) IsLocked(ctx context.Context) (bool, error) {
	if err := m.check(); err != nil {
		return false, err
	}
	n, err := m.c.Redis.Exists(ctx, m.name).Result()
	if err != nil {
		return false, fmt.Errorf("reentrant: %q: %w", m.name, err)
	}
	return n == 1, nil
}

// IsHeld reports whether ctx's owner holds the lock, as Redis sees it.
func (m *Mutex) IsHeld(ctx context.Context) (bool, error) {
	n, err := m.HoldCount(ctx)
	return n > 0, err
}

// HoldCount returns how many holds ctx's owner has on the lock, as Redis
// counts them: Lock calls not yet matched by Unlock.
func (m *Mutex) HoldCount(ctx context.Context) (int, error) {
	if err := m.check(); err != nil {
		return 0, err
	}
	owner, ok := core.OwnerFrom(ctx)
	if !ok {
		return 0, nil
	}
	n, _, err := core.OptionalInt(m.c.Redis.HGet(ctx, m.name, m.c.Field(owner)))
	if err != nil {
		return 0, fmt.Errorf("reentrant: %q: %w", m.name, err)
	}
	return int(n), nil
}

// TTL returns the time left on the lock's lease: 0 when the lock is not
// held, -1 when it is held without expiry (a foreign writer's doing).
func (m *Mutex) TTL(ctx context.Context) (time.Duration, error) {
	if err := m.check(); err != nil {
		return 0, err
	}
	ms, err := m.c.Redis.Do(ctx, "PTTL", m.name).Int64()
	if err != nil {
		return 0, fmt.Errorf("reentrant: %q: %w", m.name, err)
	}
	switch {
	case ms == -2:
		return 0, nil
	case ms < 0:
		return -1, nil
	}
	return time.Duration(ms) * time.Millisecond, nil
}
