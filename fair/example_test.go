package fair_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
)

// Workers take turns in the order they asked. Each waiter listens on its
// own channel, and each Unlock wakes only the next in line.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := fair.New(rc, "printer", nil)
	var wg sync.WaitGroup
	var printed sync.Mutex
	pages := 0
	for range 3 {
		wg.Go(func() {
			// A fresh context per worker: each is its own owner.
			ctx, err := mu.Lock(context.Background())
			if err != nil {
				log.Fatal(err)
			}
			defer mu.Unlock(ctx)
			printed.Lock()
			pages++
			printed.Unlock()
		})
	}
	wg.Wait()
	fmt.Println("pages printed:", pages)
	// Output:
	// pages printed: 3
}

// TryLock with no wait takes the lock only when it is free and nobody is
// queued; it never joins the queue.
func ExampleMutex_TryLock() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := fair.New(rc, "nightly-report", &fair.Options{WaitTimeout: fair.DefaultWaitTimeout})
	held, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	_, err = mu.TryLock(context.Background(), 0)
	fmt.Println("busy:", errors.Is(err, relock.ErrNotAcquired))
	queued, err := rdb.Exists(context.Background(), "redisson_lock_queue:{nightly-report}").Result()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("queued:", queued == 1)
	if err := mu.Unlock(held); err != nil {
		log.Fatal(err)
	}
	// Output:
	// busy: true
	// queued: false
}
