package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/semaphore"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// Allow two exports at a time across every process: whoever comes first
// sets the semaphore's permits, and each export takes one for its
// duration.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	// A fresh name, so that the example starts from no permits.
	sem := semaphore.New(rc, "exports:"+uuid.NewString(), nil) // cheap, no I/O
	ctx := context.Background()

	set, err := sem.TrySetPermits(ctx, 2) // only if no count exists yet
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("permits set:", set)

	if err := sem.Acquire(ctx, 1); err != nil { // waits for a permit
		log.Fatal(err)
	}
	n, err := sem.AvailablePermits(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("available during the export:", n)

	// Two at once are not there: TryAcquire with wait 0 tries once.
	err = sem.TryAcquire(ctx, 2, 0)
	fmt.Println("two more refused:", errors.Is(err, relock.ErrNotAcquired))

	if err := sem.Release(ctx, 1); err != nil {
		log.Fatal(err)
	}
	n, err = sem.AvailablePermits(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("available after it:", n)
	// Output:
	// permits set: true
	// available during the export: 1
	// two more refused: true
	// available after it: 2
}

// A TryAcquire that may wait is woken by the release it waits for, on
// any client: it does not poll.
func ExampleSemaphore_TryAcquire() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	sem := semaphore.New(rc, "reports:"+uuid.NewString(), nil)
	ctx := context.Background()
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		log.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		log.Fatal(err)
	}

	// The holder gives its permit back soon.
	time.AfterFunc(50*time.Millisecond, func() { sem.Release(context.Background(), 1) })
	if err := sem.TryAcquire(ctx, 1, 10*time.Second); err != nil {
		log.Fatal(err)
	}
	fmt.Println("acquired after the release")
	if err := sem.Release(ctx, 1); err != nil {
		log.Fatal(err)
	}
	// Output:
	// acquired after the release
}
