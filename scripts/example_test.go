package scripts_test

import (
	"context"
	"fmt"
	"log"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/scripts"
)

// The examples run on an embedded server; in your code, rdb is a client
// of your Redis.
func connect() (rdb *redis.Client, done func()) {
	srv, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr()})
	return rdb, func() {
		rdb.Close()
		srv.Close()
	}
}

// run runs a script and returns its reply, nil for a nil reply.
func run(rdb *redis.Client, s *redis.Script, keys []string, args ...any) any {
	reply, err := s.Run(context.Background(), rdb, keys, args...).Result()
	if err != nil && err != redis.Nil {
		log.Fatal(err)
	}
	return reply
}

const (
	name    = "orders:42"
	leaseMs = 30000
	// Owner fields, "<client id>:<owner>": a version-4 UUID, as
	// Redisson's, and a thread id, as Redisson's owners are.
	alice = "0a4e3f9c-7b1d-4c2e-9f6a-1d2c3b4a5e6f:1"
	bob   = "5d8c2b1a-3e4f-4a6b-8c7d-9e0f1a2b3c4d:1"
)

// A reentrant lock's (Redisson RLock) keys and channel.
var (
	acquireKeys = []string{name, "relock_lock_waiters:{" + name + "}"}
	unlockKeys  = []string{name, "redisson_lock__channel:{" + name + "}", "relock_lock_waiters:{" + name + "}"}
)

// Take and release a Redisson RLock from code of your own, with no relock
// Client: the lock is the same hash in Redis that Redisson's and relock's
// clients take, so it excludes them too.
func Example() {
	rdb, done := connect()
	defer done()

	fmt.Println("alice acquires:", run(rdb, scripts.Acquire(), acquireKeys, leaseMs, alice, "0"))
	fmt.Println("bob acquires:", run(rdb, scripts.Acquire(), acquireKeys, leaseMs, bob, "0") == int64(1))
	fmt.Println("alice unlocks:", run(rdb, scripts.Unlock(), unlockKeys, leaseMs, alice, "PUBLISH", "0"))
	fmt.Println("bob acquires:", run(rdb, scripts.Acquire(), acquireKeys, leaseMs, bob, "0"))
	// Output:
	// alice acquires: 1
	// bob acquires: false
	// alice unlocks: 1
	// bob acquires: 1
}

func ExampleAcquire() {
	rdb, done := connect()
	defer done()

	// "0": a single try, not a relock waiter.
	fmt.Println("alice acquires:", run(rdb, scripts.Acquire(), acquireKeys, leaseMs, alice, "0"))

	// Another owner is refused, and told how long the lease has left.
	pttl := run(rdb, scripts.Acquire(), acquireKeys, leaseMs, bob, "0").([]any)[0].(int64)
	fmt.Println("bob refused, lease left:", pttl > 0 && pttl <= leaseMs)

	// The same owner re-enters: the hash counts its holds.
	run(rdb, scripts.Acquire(), acquireKeys, leaseMs, alice, "0")
	fmt.Println("alice's holds:", rdb.HGet(context.Background(), name, alice).Val())
	// Output:
	// alice acquires: 1
	// bob refused, lease left: true
	// alice's holds: 2
}

func ExampleUnlock() {
	rdb, done := connect()
	defer done()
	run(rdb, scripts.Acquire(), acquireKeys, leaseMs, alice, "0")
	run(rdb, scripts.Acquire(), acquireKeys, leaseMs, alice, "0")

	// Unlock releases one hold (0: holds remain), then the last (1: the
	// hash is deleted and "0" published on the lock's channel, where
	// Redisson's waiters listen); then alice holds nothing (nil).
	for range 3 {
		fmt.Println("alice unlocks:", run(rdb, scripts.Unlock(), unlockKeys, leaseMs, alice, "PUBLISH", "0"))
	}
	// Output:
	// alice unlocks: 0
	// alice unlocks: 1
	// alice unlocks: <nil>
}

func ExampleForceUnlock() {
	rdb, done := connect()
	defer done()
	run(rdb, scripts.Acquire(), acquireKeys, leaseMs, alice, "0")

	// An operator deletes the lock whoever holds it.
	fmt.Println(run(rdb, scripts.ForceUnlock(), unlockKeys, "PUBLISH", leaseMs))
	fmt.Println(run(rdb, scripts.ForceUnlock(), unlockKeys, "PUBLISH", leaseMs))
	// Output:
	// [1 0a4e3f9c-7b1d-4c2e-9f6a-1d2c3b4a5e6f:1]
	// [0]
}

// Renew the lease yourself; package watchdog can do it for you, with
// Renew as its Renewal's script.
func ExampleRenew() {
	rdb, done := connect()
	defer done()
	run(rdb, scripts.Acquire(), acquireKeys, 1000, alice, "0")

	fmt.Println("alice renews:", run(rdb, scripts.Renew(), []string{name}, leaseMs, alice))
	fmt.Println("lease:", rdb.PTTL(context.Background(), name).Val() > 1000)
	fmt.Println("bob renews:", run(rdb, scripts.Renew(), []string{name}, leaseMs, bob))
	// Output:
	// alice renews: 1
	// lease: true
	// bob renews: 0
}

// A fair lock's (Redisson RFairLock) keys.
var fairKeys = []string{name, "redisson_lock_queue:{" + name + "}", "redisson_lock_timeout:{" + name + "}", "redisson_lock__channel:{" + name + "}"}

const waitMs = 300000 // how long a queued waiter may stay silent

func ExampleFairAcquire() {
	rdb, done := connect()
	defer done()

	// "0": a try, which queues nobody.
	fmt.Println("alice tries:", run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, alice, waitMs, "0", "PUBLISH"))
	// "1": bob queues, and is told that the lock is held (turn 0).
	reply := run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, bob, waitMs, "1", "PUBLISH").([]any)
	fmt.Println("bob's turn:", reply[0], "queue:", rdb.LRange(context.Background(), fairKeys[1], 0, -1).Val())
	// Output:
	// alice tries: 1
	// bob's turn: 0 queue: [5d8c2b1a-3e4f-4a6b-8c7d-9e0f1a2b3c4d:1]
}

func ExampleFairUnlock() {
	rdb, done := connect()
	defer done()
	ctx := context.Background()
	run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, alice, waitMs, "0", "PUBLISH")
	run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, bob, waitMs, "1", "PUBLISH")
	// bob, queued, listens on its own channel.
	sub := rdb.Subscribe(ctx, fairKeys[3]+":"+bob)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		log.Fatal(err)
	}

	fmt.Println("alice unlocks:", run(rdb, scripts.FairUnlock(), fairKeys, leaseMs, alice, "PUBLISH", "0"))
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("bob is told:", msg.Payload)
	fmt.Println("bob acquires:", run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, bob, waitMs, "1", "PUBLISH"))
	// Output:
	// alice unlocks: 1
	// bob is told: 0
	// bob acquires: 1
}

func ExampleFairGiveUp() {
	rdb, done := connect()
	defer done()
	run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, alice, waitMs, "0", "PUBLISH")
	run(rdb, scripts.FairAcquire(), fairKeys, leaseMs, bob, waitMs, "1", "PUBLISH")

	// bob's wait ends without the lock: it leaves the queue.
	fmt.Println("bob gives up:", run(rdb, scripts.FairGiveUp(), fairKeys, bob, waitMs, "PUBLISH", leaseMs, "0"))
	fmt.Println("queue:", rdb.LLen(context.Background(), fairKeys[1]).Val())
	fmt.Println("bob gives up:", run(rdb, scripts.FairGiveUp(), fairKeys, bob, waitMs, "PUBLISH", leaseMs, "0"))
	// Output:
	// bob gives up: 1
	// queue: 0
	// bob gives up: 0
}

// A read/write lock's (Redisson RReadWriteLock) keys and fields.
var (
	rwChannel = "redisson_rwlock:{" + name + "}"
	aliceW    = alice + ":write"
	bobW      = bob + ":write"
)

// timeouts is the timeout prefix of reader's read holds.
func timeouts(reader string) string { return "{" + name + "}:" + reader + ":rwlock_timeout" }

func ExampleRWReadAcquire() {
	rdb, done := connect()
	defer done()

	// Readers share the lock.
	fmt.Println("alice reads:", run(rdb, scripts.RWReadAcquire(), []string{name, timeouts(alice)}, leaseMs, alice, aliceW))
	fmt.Println("bob reads:", run(rdb, scripts.RWReadAcquire(), []string{name, timeouts(bob)}, leaseMs, bob, bobW))
	// A writer waits for them; a reader cannot upgrade.
	const carol = "9b2f6e1d-4a3c-4d5e-8f7a-6b5c4d3e2f1a:1"
	reply := run(rdb, scripts.RWWriteAcquire(), []string{name}, leaseMs, carol+":write", carol).([]any)
	fmt.Println("carol refused:", reply[0].(int64) > 0)
	fmt.Println("bob writes:", run(rdb, scripts.RWWriteAcquire(), []string{name}, leaseMs, bobW, bob))
	// Output:
	// alice reads: 1
	// bob reads: 1
	// carol refused: true
	// bob writes: -3
}

func ExampleRWWriteAcquire() {
	rdb, done := connect()
	defer done()

	fmt.Println("alice writes:", run(rdb, scripts.RWWriteAcquire(), []string{name}, leaseMs, aliceW, alice))
	reply := run(rdb, scripts.RWReadAcquire(), []string{name, timeouts(bob)}, leaseMs, bob, bobW).([]any)
	fmt.Println("bob refused:", reply[0].(int64) > 0)
	// The writer may read too.
	fmt.Println("alice reads:", run(rdb, scripts.RWReadAcquire(), []string{name, timeouts(alice)}, leaseMs, alice, aliceW))
	// Output:
	// alice writes: 1
	// bob refused: true
	// alice reads: 1
}

func ExampleRWReadUnlock() {
	rdb, done := connect()
	defer done()
	for range 2 {
		run(rdb, scripts.RWReadAcquire(), []string{name, timeouts(alice)}, leaseMs, alice, aliceW)
	}

	keys := []string{name, rwChannel, timeouts(alice), "{" + name + "}"}
	for range 3 {
		fmt.Println("alice unlocks:", run(rdb, scripts.RWReadUnlock(), keys, alice, "PUBLISH"))
	}
	fmt.Println("keys left:", rdb.DBSize(context.Background()).Val())
	// Output:
	// alice unlocks: 0
	// alice unlocks: 1
	// alice unlocks: <nil>
	// keys left: 0
}

func ExampleRWWriteUnlock() {
	rdb, done := connect()
	defer done()
	run(rdb, scripts.RWWriteAcquire(), []string{name}, leaseMs, aliceW, alice)

	keys := []string{name, rwChannel}
	for range 2 {
		fmt.Println("alice unlocks:", run(rdb, scripts.RWWriteUnlock(), keys, leaseMs, aliceW, "PUBLISH"))
	}
	// Output:
	// alice unlocks: 1
	// alice unlocks: <nil>
}

func ExampleRWReadRenew() {
	rdb, done := connect()
	defer done()
	run(rdb, scripts.RWReadAcquire(), []string{name, timeouts(alice)}, 1000, alice, aliceW)

	fmt.Println("alice renews:", run(rdb, scripts.RWReadRenew(), []string{name, timeouts(alice)}, leaseMs, alice))
	fmt.Println("hold's lease:", rdb.PTTL(context.Background(), timeouts(alice)+":1").Val() > 1000)
	fmt.Println("bob renews:", run(rdb, scripts.RWReadRenew(), []string{name, timeouts(bob)}, leaseMs, bob))
	// Output:
	// alice renews: 1
	// hold's lease: true
	// bob renews: 0
}
