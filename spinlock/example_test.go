package spinlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/spinlock"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// A spin lock is used like any relock lock; only its waiters differ:
// they retry after a backoff instead of subscribing to the lock's
// channel.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := spinlock.New(rc, "reports:nightly", nil) // cheap, no I/O
	held, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}

	// Another owner polls until the holder lets go.
	time.AfterFunc(50*time.Millisecond, func() { mu.Unlock(held) })
	ctx, err := mu.TryLock(context.Background(), 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(ctx)
	fmt.Println("acquired after the holder's unlock")
	// Output:
	// acquired after the holder's unlock
}

// Options.Backoff paces the waiters: Redisson's exponential backoff by
// default, or a constant one; a TryLock gives up with
// relock.ErrNotAcquired.
func ExampleOptions_backoff() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := spinlock.New(rc, "exports:weekly", &spinlock.Options{
		Backoff: spinlock.Constant{Delay: 20 * time.Millisecond},
	})
	held, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(held)

	_, err = mu.TryLock(context.Background(), 100*time.Millisecond)
	fmt.Println("gave up:", errors.Is(err, relock.ErrNotAcquired))
	// Output:
	// gave up: true
}
