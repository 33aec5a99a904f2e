package relock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/latch"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/redlock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
	"github.com/relock-go/relock/spinlock"
)

// FuzzConstructors builds every lock type, synchronizer and election from
// fuzzed names, leases and waits on a nil, a typed-nil and a closed
// client, and calls each method: nothing panics, and every call fails with an error (bad input,
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
				spinlock.New(rc, name, &spinlock.Options{Lease: time.Duration(lease), Backoff: spinlock.Constant{Delay: time.Duration(other)}}),
				nonreentrant.New(rc, name, &nonreentrant.Options{Lease: time.Duration(lease)}),
			}
			for _, l := range []relock.Locker{
				multilock.New(append(locks, (*fair.Mutex)(nil))...),
				redlock.New([]*relock.Client{rc, rc, rc}, name, &redlock.Options{Lease: time.Duration(lease)}),
			} {
				if _, err := l.Lock(ctx); !errors.Is(err, relock.ErrInvalidArgument) && !errors.Is(err, relock.ErrInvalidName) {
					t.Fatalf("%T.Lock with a nil member or unusable clients = %v, want a bad-input error", l, err)
				}
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
			synchronizers(t, ctx, rc, name, time.Duration(wait), other)
			if _, err := multilock.New(locks...).TryLock(ctx, 0); err == nil {
				t.Fatal("MultiLock.TryLock on unusable members succeeded")
			}
		}
	})
}

// synchronizers calls every method of the synchronizers and the election
// on an unusable client: each fails with an error, none panics.
func synchronizers(t *testing.T, ctx context.Context, rc *relock.Client, name string, wait time.Duration, n int64) {
	sem := semaphore.New(rc, name, &semaphore.Options{TTL: wait})
	l := latch.New(rc, name, nil)
	e := election.New(rc, name, &election.Options{WaitTimeout: wait})
	ps := permits.New(rc, name, &permits.Options{Lease: wait})
	errs := map[string]error{
		"Semaphore.Acquire":    sem.Acquire(ctx, n),
		"Semaphore.Release":    sem.Release(ctx, n),
		"Semaphore.AddPermits": sem.AddPermits(ctx, n),
		"Latch.CountDown":      l.CountDown(ctx),
		"Latch.Await":          l.Await(ctx),
		"Election.Proclaim":    e.Proclaim(ctx, name),
		"Election.Resign":      e.Resign(ctx),
		"Permits.AddPermits":   ps.AddPermits(ctx, n),
		"Permits.Release":      ps.Release(ctx, name),
	}
	errs["Semaphore.TryAcquire"] = sem.TryAcquire(ctx, n, wait)
	_, errs["Semaphore.TrySetPermits"] = sem.TrySetPermits(ctx, n)
	_, errs["Semaphore.AvailablePermits"] = sem.AvailablePermits(ctx)
	_, errs["Semaphore.DrainPermits"] = sem.DrainPermits(ctx)
	_, errs["Latch.TrySetCount"] = l.TrySetCount(ctx, n)
	_, errs["Latch.Count"] = l.Count(ctx)
	_, errs["Latch.TryAwait"] = l.TryAwait(ctx, wait)
	_, errs["Latch.Delete"] = l.Delete(ctx)
	_, errs["Election.Campaign"] = e.Campaign(ctx, name)
	_, errs["Election.TryCampaign"] = e.TryCampaign(ctx, name, wait)
	_, errs["Election.Leader"] = e.Leader(ctx)
	_, errs["Election.Observe"] = e.Observe(ctx)
	_, errs["Permits.TrySetPermits"] = ps.TrySetPermits(ctx, n)
	_, errs["Permits.AvailablePermits"] = ps.AvailablePermits(ctx)
	_, errs["Permits.Acquire"] = ps.Acquire(ctx)
	_, errs["Permits.TryAcquire"] = ps.TryAcquire(ctx, wait)
	_, errs["Permits.TryRelease"] = ps.TryRelease(ctx, name)
	_, errs["Permits.UpdateLease"] = ps.UpdateLease(ctx, name, wait)
	for call, err := range errs {
		if err == nil {
			t.Fatalf("%s on an unusable client succeeded", call)
		}
	}
}
