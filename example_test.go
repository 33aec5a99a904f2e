package relock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

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
	// lock context: relock: client closed
	// still in Redis: false
}
