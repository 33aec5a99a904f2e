package reentrant_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// Take a lock, and take it again deeper in the call chain: the context
// the lock gives carries the owner, so a nested lock with it re-enters
// instead of waiting for itself. relock.Do pairs every Lock with its
// Unlock.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	// One relock Client per process: it owns the lease watchdog and the
	// subscription that wakes waiters.
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := reentrant.New(rc, "orders:42", nil) // cheap, no I/O

	// charge runs under the lock and takes it again itself: its context
	// carries the owner, so its Do re-enters instead of waiting.
	charge := func(ctx context.Context) error {
		return relock.Do(ctx, mu, func(ctx context.Context) error {
			n, err := mu.HoldCount(ctx)
			if err != nil {
				return err
			}
			fmt.Println("holds inside charge:", n)
			return nil
		})
	}
	// Do waits until it holds the lock, runs the func with the lock's
	// context (cancelled if the lock is lost), and unlocks, even if the
	// func panics.
	err = relock.Do(context.Background(), mu, func(ctx context.Context) error {
		if err := charge(ctx); err != nil {
			return err
		}
		n, err := mu.HoldCount(ctx)
		if err != nil {
			return err
		}
		fmt.Println("holds after charge:", n)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// holds inside charge: 2
	// holds after charge: 1
}

// TryLock gives up instead of waiting without bound: with wait 0 after
// one attempt, otherwise after at most wait. Giving up is an error
// matching relock.ErrNotAcquired.
func ExampleMutex_TryLock() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := reentrant.New(rc, "reports:daily", nil)
	held, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}

	// A fresh context is another owner: it does not re-enter.
	_, err = mu.TryLock(context.Background(), 0)
	fmt.Println("first try:", errors.Is(err, relock.ErrNotAcquired))

	// The holder unlocks soon; a TryLock that may wait is woken then.
	time.AfterFunc(50*time.Millisecond, func() { mu.Unlock(held) })
	ctx, err := mu.TryLock(context.Background(), 10*time.Second)
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(ctx)
	fmt.Println("second try: acquired")
	// Output:
	// first try: true
	// second try: acquired
}

// With Fencing, every acquire draws a token from a counter that only
// grows. Pass it with each write to a storage system that rejects tokens
// lower than one it has seen: a holder that lost its lease without
// noticing (a long pause) then cannot overwrite its successor's work.
func ExampleOptions_fencing() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	// A fresh name, so that the token counter starts from zero.
	name := "invoices:" + uuid.NewString()
	mu := reentrant.New(rc, name, &reentrant.Options{Fencing: true})

	for holder := 1; holder <= 2; holder++ {
		ctx, err := mu.Lock(context.Background())
		if err != nil {
			log.Fatal(err)
		}
		token, err := mu.Token(ctx)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("holder %d writes with token %d\n", holder, token)
		if err := mu.Unlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// holder 1 writes with token 1
	// holder 2 writes with token 2
}
