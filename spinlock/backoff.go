package spinlock

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/transport"
)

// A Backoff paces a waiting Lock: after each failed attempt the waiter
// sleeps, then tries again. A Backoff keeps no state: each wait passes it
// the count of its failed attempts and its previous sleep, so one value
// serves every Mutex and every wait at once. Exponential and Constant are
// Redisson's two; any type with a Sleep method will do.
//
// A sleep never outlasts the lock's TTL as the last attempt saw it (the
// lock may be free then) nor the wait's bound, and sleeps below 1ms count
// as 1ms.
type Backoff interface {
	// Sleep returns how long to sleep after failed attempt n (1 for the
	// first) of a wait; prev is what Sleep returned for attempt n-1 (0
	// when n is 1). It must be safe for concurrent use.
	Sleep(n int, prev time.Duration) time.Duration
}

// Exponential is Redisson's default backoff (LockOptions.ExponentialBackOff):
// the first sleep is Initial, and each next one is the previous times
// Multiplier plus a random whole number of milliseconds below the count
// of earlier sleeps, capped at Max. With the defaults the sleeps run
// 1ms, 2ms, 4-5ms, ... to 128ms, which they stay at.
type Exponential struct {
	Initial    time.Duration // the first sleep; 0 means 1ms
	Max        time.Duration // the longest sleep; 0 means 128ms
	Multiplier int           // growth factor; 0 means 2
}

// Redisson's defaults.
const (
	defaultInitial    = time.Millisecond
	defaultMax        = 128 * time.Millisecond
	defaultMultiplier = 2
	defaultDelay      = 64 * time.Millisecond
)

// Sleep implements Backoff.
func (b Exponential) Sleep(n int, prev time.Duration) time.Duration {
	initial, ceiling, mult := b.Initial, b.Max, time.Duration(b.Multiplier)
	if initial == 0 {
		initial = defaultInitial
	}
	if ceiling == 0 {
		ceiling = defaultMax
	}
	if mult == 0 {
		mult = defaultMultiplier
	}
	if n <= 1 || prev <= 0 {
		return min(initial, ceiling)
	}
	if prev >= ceiling {
		return ceiling
	}
	jitter := time.Duration(rand.IntN(n-1)) * time.Millisecond
	if prev > (ceiling-jitter)/mult {
		return ceiling
	}
	return prev*mult + jitter
}

func (b Exponential) check() error {
	if b.Initial < 0 || b.Max < 0 || b.Multiplier < 0 {
		return fmt.Errorf("exponential backoff %+v: negative field: %w", b, relock.ErrInvalidArgument)
	}
	return nil
}

// Constant is Redisson's LockOptions.ConstantBackOff: every sleep is
// Delay.
type Constant struct {
	Delay time.Duration // 0 means 64ms
}

// Sleep implements Backoff.
func (b Constant) Sleep(int, time.Duration) time.Duration {
	if b.Delay == 0 {
		return defaultDelay
	}
	return b.Delay
}

func (b Constant) check() error {
	if b.Delay < 0 {
		return fmt.Errorf("constant backoff delay %v: %w", b.Delay, relock.ErrInvalidArgument)
	}
	return nil
}

// checked returns the backoff Options.Backoff b asks for, or why it is
// invalid: nil is the default, a nil pointer or func is an error.
func checked(b Backoff) (Backoff, error) {
	switch {
	case b == nil:
		return Exponential{}, nil
	case transport.IsNil(b):
		return nil, fmt.Errorf("nil %T backoff: %w", b, relock.ErrInvalidArgument)
	}
	if c, ok := b.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, err
		}
	}
	return b, nil
}
