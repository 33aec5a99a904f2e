package relock_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// A service that ends on SIGTERM releases the locks it still holds, so
// that its successor gets them at once rather than when their leases run
// out. (Here ctx is cancelled by hand; a service would take it from
// signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt).)
func ExampleClient_Shutdown() {
	m, err := miniredis.Run() // in your code: your Redis
	if err != nil {
		panic(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		panic(err)
	}

	sig, stop := context.WithCancel(context.Background())
	mu := reentrant.New(rc, "jobs:nightly", nil)
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		panic(err)
	}
	stop() // SIGTERM

	// The service stops taking work, then gives the locks back: work
	// still running under one sees its context cancelled first.
	<-sig.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rc.Shutdown(sctx); err != nil {
		fmt.Println("left to their leases:", err)
	}
	fmt.Println("lock context:", context.Cause(lctx))
	fmt.Println("still in Redis:", m.Exists("jobs:nightly"))
	// Output:
	// lock context: relock: closed
	// still in Redis: false
}

// Goroutines given a lock context share its owner: a Lock of the same
// mutex re-enters at once, and they exclude neither their parent nor
// each other. Work that must wait for the lock takes a fresh owner.
func ExampleWithNewOwner() {
	m, err := miniredis.Run() // in your code: your Redis
	if err != nil {
		panic(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	defer rc.Close()

	ctx := context.Background()
	mu := reentrant.New(rc, "orders:42", nil)
	lctx, err := mu.Lock(ctx)
	if err != nil {
		panic(err)
	}

	// Three workers on the lock context: each Lock re-enters the hold.
	var inside sync.WaitGroup
	inside.Add(3)
	leave := make(chan struct{})
	g, gctx := errgroup.WithContext(lctx)
	for range 3 {
		g.Go(func() error {
			wctx, err := mu.Lock(gctx)
			if err != nil {
				return err
			}
			defer mu.Unlock(wctx)
			inside.Done()
			<-leave
			return nil
		})
	}
	inside.Wait()
	holds, _ := mu.HoldCount(lctx)
	fmt.Println("holds with the workers inside:", holds)
	close(leave)
	if err := g.Wait(); err != nil {
		panic(err)
	}

	// With a fresh owner each, a worker waits for the parent's hold.
	g, gctx = errgroup.WithContext(lctx)
	g.Go(func() error {
		_, err := mu.TryLock(relock.WithNewOwner(gctx), 50*time.Millisecond)
		return err
	})
	err = g.Wait()
	fmt.Println("a new owner while the parent holds:", errors.Is(err, relock.ErrNotAcquired))
	if err := mu.Unlock(lctx); err != nil {
		panic(err)
	}
	wctx, err := mu.Lock(relock.WithNewOwner(ctx))
	if err != nil {
		panic(err)
	}
	fmt.Println("a new owner once the parent unlocked:", mu.Unlock(wctx))
	// Output:
	// holds with the workers inside: 4
	// a new owner while the parent holds: true
	// a new owner once the parent unlocked: <nil>
}
