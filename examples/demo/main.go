// Demo shows relock doing the job it exists for: several processes
// updating shared state in Redis, kept exact only by a distributed lock.
//
// It starts several relock Clients, each with its own go-redis client as
// if it were a separate process, and several workers on each. Every worker
// increments a counter stored in Redis with a plain GET followed by a SET
// of the value plus one: a read-modify-write that loses updates unless the
// lock excludes every other worker, in every client, while it runs.
//
// The locking follows a Go call chain. transfer locks the reentrant mutex
// "relock-demo:counter" and calls increment, which locks the same mutex
// again with the context the first Lock returned: that re-enters (the
// hold count becomes 2) instead of waiting for itself. Each worker takes
// its own owner with relock.WithNewOwner, so workers exclude each other
// even when they share a Client.
//
// At the end the demo prints the acquisitions of each worker, the
// re-entries it observed, the final counter against the expected value,
// and checks that nothing is left behind in Redis: no lock key, no waiter
// registry, and, once the clients have closed, no subscriber on the
// lock's channels (while a client is open, a channel it used stays
// subscribed for a while: relock.Options.Linger). It exits with status 1
// when a check fails and 2 on bad flags. Interrupted (Ctrl-C, SIGTERM),
// it stops as a service should: each client's Shutdown ends its waits and
// releases any lock it still holds instead of leaving it to its lease.
//
// By default it runs on an in-process miniredis and needs nothing but Go:
//
//	go run ./examples/demo
//	go run ./examples/demo -redis localhost:6379
//
// With -redis it uses the keys relock-demo:counter (the lock) and
// relock-demo:counter:value (the counter) on that server, and deletes the
// counter at start and end.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

const (
	lockName   = "relock-demo:counter"
	counterKey = "relock-demo:counter:value"
	// channel is where Redisson and relock announce the lock's release;
	// relock's waiters listen on "<channel>:<client id>".
	channel = "redisson_lock__channel:{" + lockName + "}"
	// registry is where relock's waiters on the lock register.
	registry = "relock_lock_waiters:{" + lockName + "}"
)

// config is the parsed command line.
type config struct {
	addr       string // Redis address; "" runs an in-process miniredis
	clients    int
	workers    int
	iterations int
	timeout    time.Duration
}

// errUsage marks errors caused by the command line (exit status 2).
var errUsage = errors.New("usage")

// errCheck marks a failed end-of-run check (exit status 1), already
// reported in the output.
var errCheck = errors.New("a check failed")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// parseFlags parses args. Errors are printed to stderr and match errUsage.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: go run ./examples/demo [flags]\n\n"+
			"Workers on several relock clients increment a counter in Redis under\n"+
			"one reentrant lock; the counter must come out exact.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.addr, "redis", "", "`host:port` of a Redis server to use (default: an in-process miniredis)")
	fs.IntVar(&c.clients, "clients", 4, "relock clients, each with its own connections, as if separate processes")
	fs.IntVar(&c.workers, "workers", 4, "workers per client, each its own lock owner")
	fs.IntVar(&c.iterations, "iterations", 50, "increments per worker")
	fs.DurationVar(&c.timeout, "timeout", time.Minute, "give up if the run takes longer than this")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", errUsage, err)
	}
	bad := func(format string, a ...any) (config, error) {
		fmt.Fprintf(stderr, "demo: "+format+"\n", a...)
		fmt.Fprintln(stderr, "Run with -h for usage.")
		return c, errUsage
	}
	switch {
	case fs.NArg() > 0:
		return bad("unexpected argument %q: all settings are flags", fs.Arg(0))
	case c.clients < 1:
		return bad("-clients must be at least 1, got %d", c.clients)
	case c.workers < 1:
		return bad("-workers must be at least 1, got %d", c.workers)
	case c.iterations < 1:
		return bad("-iterations must be at least 1, got %d", c.iterations)
	case c.timeout <= 0:
		return bad("-timeout must be positive, got %v", c.timeout)
	}
	if c.addr != "" {
		if _, _, err := net.SplitHostPort(c.addr); err != nil {
			return bad("-redis %q is not host:port: %v", c.addr, err)
		}
	}
	return c, nil
}

// run is the whole program; main only maps its error to an exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	addr, where := cfg.addr, "Redis at "+cfg.addr
	if addr == "" {
		m, err := miniredis.Run()
		if err != nil {
			return fmt.Errorf("starting miniredis: %w", err)
		}
		defer m.Close()
		addr, where = m.Addr(), "in-process miniredis"
	}
	// No retries: an unreachable server is reported once, at once.
	admin := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer admin.Close()
	if err := prepare(ctx, admin, addr); err != nil {
		return err
	}
	// Delete the counter at the end whatever happened, on a context that
	// outlives a timeout or an interrupt.
	defer admin.Del(context.WithoutCancel(ctx), counterKey)

	fmt.Fprintf(stdout, "relock demo on %s: %d clients x %d workers x %d iterations\n\n",
		where, cfg.clients, cfg.workers, cfg.iterations)
	ps, err := startProcesses(addr, cfg.clients)
	if err != nil {
		return err
	}
	defer func() { stopProcesses(ps) }()
	start := time.Now()
	results, err := runWorkers(ctx, ps, cfg)
	elapsed := time.Since(start)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("not done within -timeout %v: %w", cfg.timeout, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "all workers done in %v\n\n", elapsed.Round(time.Millisecond))
	// Closed clients must leave no subscription behind.
	stopProcesses(ps)
	ps = nil
	ok := report(ctx, stdout, admin, cfg, results)
	if !ok {
		return errCheck
	}
	return nil
}

// prepare checks that Redis answers and that no one holds the demo's lock
// (another demo run, or one that crashed less than a lease ago), and
// deletes the counter.
func prepare(ctx context.Context, admin *redis.Client, addr string) error {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if err := admin.Ping(pctx).Err(); err != nil {
		return fmt.Errorf("cannot reach Redis at %s: %w", addr, err)
	}
	n, err := admin.Exists(pctx, lockName).Result()
	if err != nil {
		return err
	}
	if n > 0 {
		ttl, _ := admin.PTTL(pctx, lockName).Result()
		return fmt.Errorf("lock %q is held (another demo running?); it expires in %v", lockName, ttl)
	}
	return admin.Del(pctx, counterKey).Err()
}
