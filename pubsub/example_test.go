package pubsub_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/pubsub"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// Many goroutines wait for a job's result over one subscription. Each
// subscribes before it first looks, so a message published after the
// look wakes it, and looks again at each wake-up, and after a timeout of
// its own, since a message published while the connection is down is
// lost.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	key := "job:" + uuid.NewString()
	channel := key + ":done"
	var wg sync.WaitGroup
	results := make(chan string, 3)
	for range 3 {
		sub, err := hub.Subscribe(ctx, channel)
		if err != nil {
			log.Fatal(err)
		}
		wg.Go(func() {
			defer sub.Close()
			for {
				v, err := rdb.Get(ctx, key).Result()
				if err == nil {
					results <- v
					return
				}
				if !errors.Is(err, redis.Nil) {
					log.Fatal(err)
				}
				select {
				case <-sub.C():
				case <-time.After(time.Second):
				}
			}
		})
	}
	subs, err := rdb.PubSubNumSub(ctx, channel).Result()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("subscribers on the server:", subs[channel])

	rdb.Set(ctx, key, "42", time.Minute)
	rdb.Publish(ctx, channel, "done")
	wg.Wait()
	close(results)
	for v := range results {
		fmt.Println("result:", v)
	}
	// Output:
	// subscribers on the server: 1
	// result: 42
	// result: 42
	// result: 42
}

// New takes the go-redis client to subscribe with. With Mode Sharded and
// a *redis.ClusterClient, channels are subscribed with SSUBSCRIBE on
// their masters; Logger is told of reconnects. Bad options are New's
// error.
func ExampleNew() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	if _, err := pubsub.New(rdb, &pubsub.Options{Mode: pubsub.Sharded}); err != nil {
		fmt.Println(errors.Is(err, relock.ErrInvalidArgument), err)
	}
	hub, err := pubsub.New(rdb, &pubsub.Options{Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()

	sub, err := hub.Subscribe(context.Background(), "news:"+uuid.NewString())
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	fmt.Println("subscribed")
	// Output:
	// true pubsub: Sharded needs a *redis.ClusterClient: relock: invalid argument
	// subscribed
}

// A Hub subscribes all its channels on one connection, each channel once
// however many goroutines wait on it: six subscriptions here, and the
// server counts one subscriber on each of the three channels.
func ExampleHub() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	prefix := "queue:" + uuid.NewString()
	for _, name := range []string{"a", "b", "c"} {
		for range 2 {
			sub, err := hub.Subscribe(ctx, prefix+":"+name)
			if err != nil {
				log.Fatal(err)
			}
			defer sub.Close()
		}
	}

	for _, name := range []string{"a", "b", "c"} {
		channel := prefix + ":" + name
		subs, err := rdb.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(name, "subscribers on the server:", subs[channel])
	}
	// Output:
	// a subscribers on the server: 1
	// b subscribers on the server: 1
	// c subscribers on the server: 1
}

// Subscribe returns once the server has the subscription: a message
// published right after it is heard.
func ExampleHub_Subscribe() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	channel := "orders:" + uuid.NewString()
	sub, err := hub.Subscribe(ctx, channel)
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	n, err := rdb.Publish(ctx, channel, "order:42").Result()
	if err != nil {
		log.Fatal(err)
	}
	<-sub.C()
	fmt.Println("connections that received it:", n)
	// Output:
	// connections that received it: 1
}

// A listener is told every payload, in order.
func ExampleHub_Listen() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	channel := "events:" + uuid.NewString()
	// f must not block: a buffered channel hands the payloads on.
	payloads := make(chan string, 100)
	err = hub.Listen(ctx, channel, func(payload string) { payloads <- payload })
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{"created", "paid", "shipped"} {
		rdb.Publish(ctx, channel, p)
	}
	for range 3 {
		fmt.Println(<-payloads)
	}
	// Output:
	// created
	// paid
	// shipped
}

// A waiter selects on Done beside C, which is never closed, to stop when
// the hub closes.
func ExampleHub_Done() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}

	sub, err := hub.Subscribe(context.Background(), "jobs:"+uuid.NewString())
	if err != nil {
		log.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		defer sub.Close()
		for {
			select {
			case <-sub.C():
				// look for jobs
			case <-hub.Done():
				fmt.Println("hub closed")
				return
			}
		}
	}()
	hub.Close()
	<-stopped
	// Output:
	// hub closed
}

// Close stops the hub's goroutines and closes its connections; calling
// it again does nothing. Subscribe and Listen on a closed hub return
// ErrClosed.
func ExampleHub_Close() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()

	if _, err := hub.Subscribe(ctx, "jobs:"+uuid.NewString()); err != nil {
		log.Fatal(err)
	}
	fmt.Println(hub.Close())
	fmt.Println(hub.Close())

	_, err = hub.Subscribe(ctx, "jobs:"+uuid.NewString())
	fmt.Println(errors.Is(err, pubsub.ErrClosed), err)
	// Output:
	// <nil>
	// <nil>
	// true relock: closed
}

// Each Subscription is a waiter of its own: a message wakes every waiter
// on its channel, whatever its payload, while the server sees one
// subscriber.
func ExampleSubscription() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	channel := "config:" + uuid.NewString()
	a, err := hub.Subscribe(ctx, channel)
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	b, err := hub.Subscribe(ctx, channel)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()

	n, err := rdb.Publish(ctx, channel, "0").Result()
	if err != nil {
		log.Fatal(err)
	}
	<-a.C()
	<-b.C()
	fmt.Println("received by", n, "connection; a and b woken")
	// Output:
	// received by 1 connection; a and b woken
}

// C holds one wake-up: messages that come before the waiter takes it
// wake it once. Here a listener on the same channel tells when all three
// have come.
func ExampleSubscription_C() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	channel := "stock:" + uuid.NewString()
	sub, err := hub.Subscribe(ctx, channel)
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	heard := make(chan string, 3)
	if err := hub.Listen(ctx, channel, func(p string) { heard <- p }); err != nil {
		log.Fatal(err)
	}
	for _, p := range []string{"7", "6", "5"} {
		rdb.Publish(ctx, channel, p)
	}
	for range 3 {
		<-heard
	}

	fmt.Println("wake-ups waiting:", len(sub.C()))
	// Output:
	// wake-ups waiting: 1
}

// Close removes one waiter; the channel stays subscribed for the others.
func ExampleSubscription_Close() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	hub, err := pubsub.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer hub.Close()
	ctx := context.Background()

	channel := "alerts:" + uuid.NewString()
	a, err := hub.Subscribe(ctx, channel)
	if err != nil {
		log.Fatal(err)
	}
	b, err := hub.Subscribe(ctx, channel)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	a.Close()
	a.Close() // idempotent

	n, err := rdb.Publish(ctx, channel, "disk full").Result()
	if err != nil {
		log.Fatal(err)
	}
	<-b.C()
	fmt.Println("received by", n, "connection; b woken")
	// Output:
	// received by 1 connection; b woken
}
