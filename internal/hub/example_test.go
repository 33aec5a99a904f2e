package hub_test

import (
	"context"
	"fmt"
	"log"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// Wait for messages on a channel from many goroutines over one
// subscription connection. A wake-up says "look again": a waiter retries
// whatever it waits for (a lock, a job) when woken, and also after a
// timeout of its own, since messages published while the connection is
// down are lost.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	h := hub.New(rdb, false, nil) // false: PUBLISH and SUBSCRIBE, not sharded
	defer h.Close()
	ctx := context.Background()

	channel := "jobs:" + uuid.NewString()
	// Subscribe returns once the server has the subscription: no message
	// published after it is missed. Every subscriber states how the
	// channel's messages wake its waiters: WakeOne, as a lock's channel.
	a, err := h.Subscribe(ctx, channel, hub.WakeOne)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := h.Subscribe(ctx, channel, hub.WakeOne)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	waiters, channels := h.Stats()
	fmt.Println("waiters:", waiters, "channels:", channels, "connections:", h.Connections())

	// Any message but "0" wakes every waiter on the channel.
	rdb.Publish(ctx, channel, "new jobs")
	<-a.C()
	<-b.C()
	fmt.Println("a and b woken")

	// "0" wakes one: the waiter woken longest ago, here the first.
	rdb.Publish(ctx, channel, "0")
	<-a.C()
	fmt.Println("a woken, b too:", len(b.C()) > 0)
	// Output:
	// waiters: 2 channels: 1 connections: 1
	// a and b woken
	// a woken, b too: false
}

// Join tags a waiter: a message "<tag>:<note>" goes to the first waiter
// with that tag alone, which reads the note.
func ExampleHub_Join() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	h := hub.New(rdb, false, nil)
	defer h.Close()
	ctx := context.Background()

	channel := "grants:" + uuid.NewString()
	w1, err := h.Join(ctx, channel, hub.WakeOne, "worker-1")
	if err != nil {
		log.Fatal(err)
	}
	defer w1.Close()
	w2, err := h.Join(ctx, channel, hub.WakeOne, "worker-2")
	if err != nil {
		log.Fatal(err)
	}
	defer w2.Close()

	rdb.Publish(ctx, channel, "worker-2:job 7")
	<-w2.C()
	fmt.Printf("worker-2 told %q; worker-1 woken: %v\n", w2.Note(), len(w1.C()) > 0)
	// Output:
	// worker-2 told "job 7"; worker-1 woken: false
}
