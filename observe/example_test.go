package observe_test

import (
	"context"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/observe"
	"github.com/relock-go/relock/reentrant"
)

// printer is an Observer that prints how each acquire ended and why each
// hold ended. Embedding Base leaves the other events alone.
type printer struct{ observe.Base }

func (printer) StartAcquire(ctx context.Context, l observe.Lock, op observe.Op) (context.Context, func(observe.Acquire)) {
	return ctx, func(a observe.Acquire) {
		fmt.Printf("%s %s %q: %v after %d attempt(s)\n", l.Kind, op, l.Name, a.Outcome, a.Attempts)
	}
}

func (printer) HoldEnded(h observe.HoldEnd) {
	fmt.Printf("%s %q: hold ended, cause %v\n", h.Kind, h.Name, h.Cause)
}

// Watch a Client's locks: set an Observer in relock.Options, and read
// Stats at any time. (The example runs on an embedded Redis; in your code
// the client is your Redis's.)
func Example() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	rc, err := relock.New(rdb, &relock.Options{Observer: printer{}})
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	mu := reentrant.New(rc, "orders:42", nil)
	lctx, err := mu.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("holds while locked:", rc.Stats().Holds)
	if err := mu.Unlock(lctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("holds after Unlock:", rc.Stats().Holds)
	// Output:
	// reentrant Lock "orders:42": acquired after 1 attempt(s)
	// holds while locked: 1
	// reentrant "orders:42": hold ended, cause <nil>
	// holds after Unlock: 0
}
