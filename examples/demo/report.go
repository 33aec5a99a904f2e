package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
)

// unsubscribeGrace bounds how long the channel check waits for the
// waiters' last UNSUBSCRIBE: it travels on each client's own subscription
// connection, which the server reads independently of the connection
// asking PUBSUB NUMSUB.
const unsubscribeGrace = time.Second

// report prints the workers' table and the end-of-run checks, and reports
// whether every check passed.
func report(ctx context.Context, w io.Writer, admin *redis.Client, cfg config, results []*stats) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "client\tworker\tacquisitions\tre-entries\tlongest wait\t")
	var locks, reentries int
	for _, st := range results {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%v\t\n", st.client, st.worker, st.locks, st.reentries,
			st.longestWait.Round(100*time.Microsecond))
		locks += st.locks
		reentries += st.reentries
	}
	fmt.Fprintf(tw, "total\t\t%d\t%d\t\t\n", locks, reentries)
	tw.Flush()
	fmt.Fprintln(w)

	ok := true
	check := func(pass bool, format string, a ...any) {
		verdict := "OK"
		if !pass {
			verdict, ok = "MISMATCH", false
		}
		fmt.Fprintf(w, "%-9s "+format+"\n", append([]any{verdict}, a...)...)
	}
	want := cfg.clients * cfg.workers * cfg.iterations
	check(reentries == want, "re-entries observed: %d of %d", reentries, want)

	got, err := admin.Get(ctx, counterKey).Int()
	if errors.Is(err, redis.Nil) {
		got, err = 0, nil
	}
	if err != nil {
		check(false, "counter: %v", err)
	} else {
		check(got == want, "counter: %d, expected %d", got, want)
	}

	for _, key := range []string{lockName, registry} {
		n, err := admin.Exists(ctx, key).Result()
		if err != nil {
			check(false, "key %s: %v", key, err)
		} else {
			check(n == 0, "key %s left in Redis: %s", key, yesNo(n > 0))
		}
	}

	subs, err := subscribers(ctx, admin)
	if err != nil {
		check(false, "subscribers of %s*: %v", channel, err)
	} else {
		check(subs == 0, "subscribers of %s* after the clients closed: %d", channel, subs)
	}
	return ok
}

// subscribers returns the number of subscribers of the lock's channels,
// waiting up to unsubscribeGrace for it to reach 0.
func subscribers(ctx context.Context, admin *redis.Client) (int64, error) {
	deadline := time.Now().Add(unsubscribeGrace)
	for {
		var n int64
		chans, err := admin.PubSubChannels(ctx, channel+"*").Result()
		if err == nil && len(chans) > 0 {
			var counts map[string]int64
			counts, err = admin.PubSubNumSub(ctx, chans...).Result()
			for _, c := range counts {
				n += c
			}
		}
		if err != nil {
			return 0, err
		}
		if n == 0 || time.Now().After(deadline) {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
