package latch_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/latch"
)

// The example runs against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// Wait until three workers, anywhere, have finished their part. The
// workers here are goroutines; in practice they are other processes,
// Go with relock or Java with Redisson's RCountDownLatch, counting down
// the same latch.
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

	done := latch.New(rc, "import:2024-06-01", nil) // cheap, no I/O
	if _, err := done.TrySetCount(ctx, 3); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		go func() {
			time.Sleep(10 * time.Millisecond) // the worker's part
			if err := done.CountDown(ctx); err != nil {
				log.Print(err)
			}
		}()
	}

	if err := done.Await(ctx); err != nil { // sleeps until the count is 0
		log.Fatal(err)
	}
	n, err := done.Count(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("all parts done; count:", n)
	// Output: all parts done; count: 0
}
