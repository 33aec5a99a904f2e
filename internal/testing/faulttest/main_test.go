// Package faulttest_test puts relock's locks under network faults: an
// in-process TCP proxy (toxiproxy, as a library) between Clients and a
// real redis-server adds latency, black-holes or resets connections, and
// a child process holding a lock is killed with SIGKILL. The history
// checker records every acquisition of many Clients under random faults
// and checks it against a mutex model with porcupine, and that fencing
// tokens increase in grant order.
//
// Everything listens on 127.0.0.1 only, on ports chosen at start.
package faulttest_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own lock names.
var srv *redistest.Server

func TestMain(m *testing.M) {
	if role, args, ok := redistest.ChildRole(); ok {
		os.Exit(runChild(role, args))
	}
	s, err := redistest.Launch()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	srv = s
	code := m.Run()
	s.Stop()
	if code == 0 {
		// Look again for up to 3s: after a partition that refused
		// connections, go-redis's pool has a redial goroutine that
		// notices its pool closed only after its 1s sleep.
		err := goleak.Find(toxiproxyLeaks...)
		for try := 0; err != nil && try < 3; try++ {
			time.Sleep(time.Second)
			err = goleak.Find(toxiproxyLeaks...)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// toxiproxyLeaks ignores toxiproxy's own leaks: a toxic's stub (latency,
// or the no-op stub that ends every link) whose link closed while it was
// being interrupted stays blocked sending its last chunk to the next stub,
// which has already exited (toxiproxy v2.12.0, toxics/latency.go:44,
// toxics/noop.go:16). No relock goroutine is ignored.
var toxiproxyLeaks = []goleak.Option{
	goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*LatencyToxic).Pipe"),
	goleak.IgnoreTopFunction("github.com/Shopify/toxiproxy/v2/toxics.(*NoopToxic).Pipe"),
}

var clientNames atomic.Int64

// newRedis returns a go-redis client for addr (the server or a proxy in
// front of it), closed when tb ends. Options are go-redis's defaults,
// as a user's would be, apart from the client name.
func newRedis(tb testing.TB, addr string) *redis.Client {
	tb.Helper()
	return redisAs(tb, addr, "", "")
}

func redisAs(tb testing.TB, addr, user, password string) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{
		Addr:       addr,
		ClientName: "relock-fault-" + strconv.FormatInt(clientNames.Add(1), 10),
		Username:   user,
		Password:   password,
	})
	tb.Cleanup(func() { c.Close() })
	return c
}

// newClient returns a relock client over a go-redis client of its own on
// addr, as if it were a separate process; both close when tb ends. On a
// real server it runs as redistest.LockUser.
func newClient(tb testing.TB, addr string, opts *relock.Options) *relock.Client {
	tb.Helper()
	o := srv.LockOptions()
	return redistest.Relock(tb, redisAs(tb, addr, o.Username, o.Password), opts)
}

// requireReal skips tb when the shared server is miniredis (no
// redis-server installed; under RELOCK_REQUIRE_REDIS=1 it never is), and
// under -short: every fault test begins with it.
func requireReal(tb testing.TB) {
	tb.Helper()
	redistest.SkipShort(tb, "a fault test (faults on a real server, seconds to minutes)")
	srv.RequireReal(tb)
}

// channelOf is the release channel of reentrant lock name.
func channelOf(name string) string { return "redisson_lock__channel:{" + name + "}" }

// lockChannels lists the subscribed channels of reentrant lock name: its
// release channel and the channels relock clients' waiters listen on,
// "<release channel>:<client id>".
func lockChannels(raw *redis.Client, name string) []string {
	glob := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(channelOf(name))
	return raw.PubSubChannels(context.Background(), glob+"*").Val()
}

// waitSubscribed waits until n subscriptions to lock name's channels
// exist, as the server counts them.
func waitSubscribed(tb testing.TB, raw *redis.Client, name string, n int64) {
	tb.Helper()
	redistest.Eventually(tb, 5*time.Second, "waiter subscribed", func() bool {
		chans := lockChannels(raw, name)
		if len(chans) == 0 {
			return false
		}
		var got int64
		for _, c := range raw.PubSubNumSub(context.Background(), chans...).Val() {
			got += c
		}
		return got >= n
	})
}
