package election_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
)

// A singleton job: every replica of a service campaigns, and only the
// leader runs the job, until its leadership context ends (it resigned,
// lost its lease, or the process is shutting down). Writes the job makes
// elsewhere carry the term, so that a deposed leader's late writes can
// be told apart.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	e := election.New(rc, "billing:nightly", nil)
	lead, err := e.Campaign(context.Background(), "host-a") // waits its turn
	if err != nil {
		log.Fatal(err)
	}
	term, _ := election.TermOf(lead)
	runJob := func(ctx context.Context, term int64) {
		select {
		case <-ctx.Done(): // leadership over: stop at once
		case <-time.After(10 * time.Millisecond): // one round of work
		}
	}
	runJob(lead, term)

	l, err := e.Leader(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leader:", l.Value, "term matches:", l.Term == term)
	// Hand over to the next replica in line.
	if err := e.Resign(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("leading after Resign:", lead.Err() == nil)
	// Output:
	// leader: host-a term matches: true
	// leading after Resign: false
}

// A fast failover: the leader's lease in this election is 2 s, renewed
// every 2/3 s, so a leader whose process dies is replaced within about
// 2 s, while the client's other locks keep the default 30 s
// WatchdogTimeout.
func ExampleOptions() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	rc, err := relock.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer rc.Close()

	e := election.New(rc, "scheduler", &election.Options{WatchdogTimeout: 2 * time.Second})
	lead, err := e.Campaign(context.Background(), "host-a")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("leading:", lead.Err() == nil)
	if err := e.Resign(context.Background()); err != nil {
		log.Fatal(err)
	}
	// Output:
	// leading: true
}
