package permits_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/permits"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// At most two workers at once, across every process that shares the
// semaphore. A permit is kept alive by the client's watchdog while it is
// held, and comes back on its own when its holder dies; its context ends
// if it is lost, so work done under it can stop.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	ctx := context.Background()
	// A fresh name, so that the example starts from an empty semaphore.
	sem := permits.New(rc, "workers:"+uuid.NewString(), nil) // cheap, no I/O
	// Set up once; false when another process has done it already.
	if _, err := sem.TrySetPermits(ctx, 2); err != nil {
		log.Fatal(err)
	}

	p, err := sem.Acquire(ctx) // waits until a permit is free
	if err != nil {
		log.Fatal(err)
	}
	work := func(ctx context.Context) error { return ctx.Err() }
	if err := work(p.Context()); err != nil {
		log.Fatal(err)
	}
	n, err := sem.AvailablePermits(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("available while held:", n)
	if err := p.Release(ctx); err != nil {
		log.Fatal(err)
	}
	n, err = sem.AvailablePermits(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("available after release:", n)
	// Output:
	// available while held: 1
	// available after release: 2
}

// TryAcquire gives up instead of waiting without bound: with wait 0
// after one attempt. Giving up is an error matching
// relock.ErrNotAcquired.
func ExampleSemaphore_TryAcquire() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	ctx := context.Background()
	sem := permits.New(rc, "exports:"+uuid.NewString(), nil)
	if _, err := sem.TrySetPermits(ctx, 1); err != nil {
		log.Fatal(err)
	}
	p, err := sem.TryAcquire(ctx, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer p.Release(ctx)
	_, err = sem.TryAcquire(ctx, 0)
	fmt.Println("second try:", errors.Is(err, relock.ErrNotAcquired))
	// Output:
	// second try: true
}
