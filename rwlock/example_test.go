package rwlock_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/rwlock"
)

// Readers share the lock; a writer has it alone. A reader that asks for
// the write lock is refused at once instead of waiting for itself.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	rw := rwlock.New(rc, "catalog", nil)
	r1, err := rw.RLock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	// Another owner reads at the same time.
	r2, err := rw.TryRLock(context.Background(), 0)
	if err != nil {
		log.Fatal(err)
	}
	_, err = rw.TryLock(context.Background(), 0)
	fmt.Println("writer while reading:", errors.Is(err, relock.ErrNotAcquired))
	_, err = rw.Lock(r1)
	fmt.Println("reader upgrading:", errors.Is(err, relock.ErrUpgrade))

	for _, ctx := range []context.Context{r1, r2} {
		if err := rw.RUnlock(ctx); err != nil {
			log.Fatal(err)
		}
	}
	w, err := rw.Lock(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("writer alone")
	if err := rw.Unlock(w); err != nil {
		log.Fatal(err)
	}
	// Output:
	// writer while reading: true
	// reader upgrading: true
	// writer alone
}

// A writer may take read holds and keep them when it releases the write
// lock (a downgrade): others may then read, but not write.
func ExampleRWMutex_downgrade() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	rw := rwlock.New(rc, "prices", nil)
	owner := relock.WithNewOwner(context.Background())
	w, err := rw.Lock(owner)
	if err != nil {
		log.Fatal(err)
	}
	// The read hold uses owner, not w: a context derived from w ends
	// with the write hold.
	r, err := rw.RLock(owner)
	if err != nil {
		log.Fatal(err)
	}
	if err := rw.Unlock(w); err != nil {
		log.Fatal(err)
	}
	reading, err := rw.Reader().IsLocked(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("read mode after the downgrade:", reading)
	if err := rw.RUnlock(r); err != nil {
		log.Fatal(err)
	}
	// Output:
	// read mode after the downgrade: true
}
