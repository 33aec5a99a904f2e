package relock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// FuzzConstructors builds every lock type from fuzzed names, leases and
// waits on a nil, a typed-nil and a closed client, and calls each
// method: nothing panics, and every call fails with an error (bad input,
// or ErrClosed), sending nothing to Redis.
func FuzzConstructors(f *testing.F) {
	f.Add("orders:42", int64(0), int64(0), int64(0))
	f.Add("", int64(-1), int64(-time.Second), int64(1))
	f.Add("{}", int64(time.Microsecond), int64(time.Minute), int64(time.Hour))
	f.Add("a}b", int64(time.Second), int64(1), int64(-1))
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	f.Cleanup(func() { rdb.Close() })
	closed, err := relock.New(rdb, nil)
	if err != nil {
		f.Fatal(err)
	}
	closed.Close()
	clients := []*relock.Client{nil, (*relock.Client)(nil), closed}
	f.Fuzz(func(t *testing.T, name string, lease, wait, other int64) {
		ctx := context.Background()
		for _, rc := range clients {
			locks := []relock.Locker{
				reentrant.New(rc, name, &reentrant.Options{Lease: time.Duration(lease), Fencing: other%2 == 0}),
				fair.New(rc, name, &fair.Options{Lease: time.Duration(lease), WaitTimeout: time.Duration(other)}),
				rwlock.New(rc, name, &rwlock.Options{Lease: time.Duration(lease)}).Reader(),
				rwlock.New(rc, name, &rwlock.Options{Lease: time.Duration(lease)}).Writer(),
			}
			if ml, err := multilock.New(append(locks, (*fair.Mutex)(nil))...); err == nil || ml != nil {
				t.Fatalf("multilock.New with a typed nil member = %v, %v", ml, err)
			}
			if rl, err := redlock.New(name, []*relock.Client{rc, rc, rc}, &redlock.Options{Lease: time.Duration(lease)}); err == nil || rl != nil {
				t.Fatalf("redlock.New on unusable clients = %v, %v", rl, err)
			}
			for _, l := range locks {
				_ = l.Name()
				if _, err := l.TryLock(ctx, time.Duration(wait)); err == nil {
					t.Fatalf("%T.TryLock on an unusable client succeeded", l)
				}
				if _, err := l.Lock(ctx); err == nil {
					t.Fatalf("%T.Lock on an unusable client succeeded", l)
				}
				if err := l.Unlock(relock.WithNewOwner(ctx)); err == nil {
					t.Fatalf("%T.Unlock on an unusable client succeeded", l)
				}
			}
			if ml, err := multilock.New(locks...); err == nil {
				if _, err := ml.TryLock(ctx, 0); err == nil {
					t.Fatal("MultiLock.TryLock on unusable members succeeded")
				}
			} else if !errors.Is(err, relock.ErrInvalidArgument) && !errors.Is(err, relock.ErrInvalidName) {
				t.Fatalf("multilock.New = %v, want a bad-input error", err)
			}
		}
	})
}
