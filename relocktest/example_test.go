package relocktest_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/relocktest"
)

// handle is the code under test: it writes under the lock until its work
// is done or the lock is lost, and must not write after that.
func handle(ctx context.Context, mu *reentrant.Mutex, writes *atomic.Int64) error {
	lctx, err := mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer mu.Unlock(lctx)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-lctx.Done():
			return context.Cause(lctx)
		case <-tick.C:
			writes.Add(1)
		}
	}
}

// A test that the handler stops writing when its lock is lost. In a test
// function, relocktest.New(t, nil) replaces Start and Close.
func Example() {
	kit, err := relocktest.Start(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer kit.Close()

	mu := reentrant.New(kit.Client(), kit.Name("orders"), nil)
	var writes atomic.Int64
	done := make(chan error, 1)
	go func() { done <- handle(context.Background(), mu, &writes) }()
	for i := 0; writes.Load() == 0 && i < 5000; i++ {
		time.Sleep(time.Millisecond) // until the handler holds the lock and writes
	}

	if err := kit.ExpireNow(context.Background(), mu.Name()); err != nil {
		log.Fatal(err)
	}
	select {
	case err := <-done:
		fmt.Println("handler stopped with ErrLockLost:", errors.Is(err, relock.ErrLockLost))
	case <-time.After(5 * time.Second):
		fmt.Println("handler still writing after its lock was lost")
	}
	// Output:
	// handler stopped with ErrLockLost: true
}
