package grouplock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/testing/locktest"
)

// TestLate runs locktest's checks of what a call leaves when it gives up
// on a group lock of two values: its late attempts, its churn (with
// ForceUnlock) and the reordering explorer.
func TestLate(t *testing.T) {
	locktest.RunLate(t, srv, locktest.Kind{
		New: func(rc *relock.Client, name string, lease time.Duration) locktest.Lock {
			return groupLock{grouplock.New(rc, name, []string{"a", "b"}, &grouplock.Options{Lease: lease})}
		},
		Channel: func(name string) string { return "redisson_lock__channel:{" + name + "}" },
	})
}

// groupLock is a group lock as locktest.Lock: its ForceUnlock is the
// churn's; the state queries it lacks are not used.
type groupLock struct{ *grouplock.Mutex }

func (groupLock) HoldCount(context.Context) (int, error)     { return 0, errors.ErrUnsupported }
func (groupLock) TTL(context.Context) (time.Duration, error) { return 0, errors.ErrUnsupported }
