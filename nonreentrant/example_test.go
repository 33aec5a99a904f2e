package nonreentrant_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/nonreentrant"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// A second Lock by the owner that holds the lock fails at once with
// relock.ErrNotReentrant instead of taking a second hold or waiting for
// itself; work that must wait for the lock takes a fresh owner.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := nonreentrant.New(rc, "payouts:7", nil) // cheap, no I/O
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(ctx)

	_, err = mu.Lock(ctx) // the same owner again
	fmt.Println("second Lock refused:", errors.Is(err, relock.ErrNotReentrant))

	n, err := mu.HoldCount(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holds:", n)

	_, err = mu.TryLock(relock.WithNewOwner(ctx), 0) // another owner
	fmt.Println("other owner:", errors.Is(err, relock.ErrNotAcquired))
	// Output:
	// second Lock refused: true
	// holds: 1
	// other owner: true
}

// The fair variant grants the lock in arrival order (a waiter joins the
// queue, and Unlock hands the lock to its head) and refuses its holder
// in the same way, without queueing it behind itself.
func ExampleNewFair() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := nonreentrant.NewFair(rc, "payouts:8", nil) // cheap, no I/O
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	_, err = mu.TryLock(ctx, time.Minute) // the same owner again
	fmt.Println("second Lock refused:", errors.Is(err, relock.ErrNotReentrant))

	other := relock.WithNewOwner(context.Background()) // as another process
	_, err = mu.TryLock(other, 10*time.Millisecond)
	fmt.Println("other owner waited in vain:", errors.Is(err, relock.ErrNotAcquired))

	if err := mu.Unlock(ctx); err != nil {
		log.Fatal(err)
	}
	octx, err := mu.Lock(other)
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(octx)
	n, err := mu.HoldCount(octx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("other owner's holds:", n)
	// Output:
	// second Lock refused: true
	// other owner waited in vain: true
	// other owner's holds: 1
}
