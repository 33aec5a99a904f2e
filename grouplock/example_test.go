package grouplock_test

import (
	"context"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
)

// Seat two students of class 100 at once: both values of the group are
// locked in one call, or neither, and a Redisson client with its default
// codec that calls getMultiLock("class_100", List.of("Jack_001",
// "Mary_002")) takes the same record.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr}) // in your code: your Redis server
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := grouplock.New(rc, "class_100", []string{"Jack_001", "Mary_002"}, nil)
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer mu.Unlock(ctx)

	// Another owner wanting Mary and Tom finds Mary taken, and takes nothing.
	other := grouplock.New(rc, "class_100", []string{"Mary_002", "Tom_003"}, nil)
	_, err = other.TryLock(relock.WithNewOwner(context.Background()), 0)
	fmt.Println("other set taken:", err == nil)

	// HGET class_100 <field> names Jack's holder.
	fmt.Println("Jack's field:", grouplock.Kryo5Codec.Field("Jack_001"))
	// Output:
	// other set taken: false
	// Jack's field: DScHoUUqdQJ9J7Ux220rcQ
}
