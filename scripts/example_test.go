package scripts_test

import (
	"context"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/scripts"
)

// Take and release a Redisson RLock from code of your own, with no relock
// Client: the lock is the same hash in Redis that Redisson's and relock's
// clients take, so it excludes them too. The keys and arguments are those
// the headers of acquire.lua and unlock.lua document.
func Example() {
	srv, err := miniredis.Run() // in your code: your Redis
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	ctx := context.Background()

	const (
		name    = "orders:42"
		leaseMs = 30000
		// "<client id>:<owner>": a version-4 UUID, as Redisson's, and a
		// thread id, as Redisson's owners are.
		alice = "0a4e3f9c-7b1d-4c2e-9f6a-1d2c3b4a5e6f:1"
		bob   = "5d8c2b1a-3e4f-4a6b-8c7d-9e0f1a2b3c4d:1"
	)
	acquireKeys := []string{name, "relock_lock_waiters:{" + name + "}"}
	unlockKeys := []string{name, "redisson_lock__channel:{" + name + "}", "relock_lock_waiters:{" + name + "}"}

	// "0": a single try, not a relock waiter.
	reply, err := scripts.Acquire().Run(ctx, rdb, acquireKeys, leaseMs, alice, "0").Result()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("alice acquires:", reply)

	// Another owner is refused, and told how long the lease has left.
	reply, err = scripts.Acquire().Run(ctx, rdb, acquireKeys, leaseMs, bob, "0").Result()
	if err != nil {
		log.Fatal(err)
	}
	pttl := reply.([]any)[0].(int64)
	fmt.Println("bob refused, lease left:", pttl > 0 && pttl <= leaseMs)

	// The same owner re-enters: the hash counts its holds.
	if _, err := scripts.Acquire().Run(ctx, rdb, acquireKeys, leaseMs, alice, "0").Result(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("alice's holds:", rdb.HGet(ctx, name, alice).Val())

	// Unlock releases one hold (0: holds remain), then the last (1: the
	// hash is deleted and "0" published on the lock's channel, where
	// Redisson's waiters listen).
	for range 2 {
		reply, err = scripts.Unlock().Run(ctx, rdb, unlockKeys, leaseMs, alice, "PUBLISH", "0").Result()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("alice unlocks:", reply)
	}

	reply, err = scripts.Acquire().Run(ctx, rdb, acquireKeys, leaseMs, bob, "0").Result()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bob acquires:", reply)
	// Output:
	// alice acquires: 1
	// bob refused, lease left: true
	// alice's holds: 2
	// alice unlocks: 0
	// alice unlocks: 1
	// bob acquires: 1
}
