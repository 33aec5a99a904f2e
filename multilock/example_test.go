package multilock_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
)

// Move stock between two warehouses whose locks live on different Redis
// servers: hold both or neither.
func Example() {
	addrA, addrB := servers[0].Addr, servers[1].Addr // in your code: your Redis servers
	rdbA := redis.NewClient(&redis.Options{Addr: addrA})
	defer rdbA.Close()
	rdbB := redis.NewClient(&redis.Options{Addr: addrB})
	defer rdbB.Close()
	rcA, err := relock.New(rdbA, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rcA.Close()
	rcB, err := relock.New(rdbB, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rcB.Close()

	ml := multilock.New(
		reentrant.New(rcB, "stock:berlin", nil),
		reentrant.New(rcA, "stock:amsterdam", nil),
	)
	ctx, err := ml.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer ml.Unlock(ctx)
	fmt.Println("holding", ml.Name())
	// Output:
	// holding stock:amsterdam,stock:berlin
}
