package inspect_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/reentrant"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// Read shows who holds a lock, how many times and for how long: here a
// lock that a relock client holds twice. The operator's side needs only
// a go-redis client.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	// A service holds a lock, re-entered once.
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	mu := reentrant.New(rc, "reports:nightly", nil)
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(ctx)
	inner, err := mu.Lock(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(inner)

	// The operator looks.
	l, err := inspect.Read(context.Background(), rdb, "reports:nightly")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("kind:", l.Kind)
	for _, h := range l.Holders {
		fmt.Println("held by a", h.Library, "client, holds:", h.Holds, "this client:", h.ClientID == rc.ID())
	}
	fmt.Println("lease running:", l.TTL > 0)
	// Output:
	// kind: lock
	// held by a relock client, holds: 2 this client: true
	// lease running: true
}

// List finds lock records by name pattern, on every master of a cluster.
func ExampleList() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()
	mu := reentrant.New(rc, "invoices:7", nil)
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(ctx)

	err = inspect.List(context.Background(), rdb, "invoices:*", func(name string) error {
		fmt.Println("lock:", name)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// lock: invoices:7
}
