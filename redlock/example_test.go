package redlock_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/redlock"
)

// A lock held by a majority of five independent masters: it survives two
// of them failing.
func Example() {
	var clients []*relock.Client
	for _, s := range shared {
		addr := s.Addr // in your code: each master's address
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		rc, err := relock.New(rdb, nil)
		if err != nil {
			log.Fatal(err)
		}
		defer rc.Close()
		clients = append(clients, rc)
	}

	rl := redlock.New(clients, "payments:settle", nil)
	ctx, err := rl.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer rl.Unlock(ctx)
	fmt.Println("quorum:", rl.Quorum(), "of", len(clients))
	// Output:
	// quorum: 3 of 5
}
