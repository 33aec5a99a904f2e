package watchdog_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/scripts"
	"github.com/relock-go/relock/watchdog"
)

// The examples run against the test server started by TestMain. In your
// code the address is your Redis, for example "localhost:6379".

// renew is the renewal of a lock of your own, a string holding its
// owner's token: it must reply 1 while the lock is held, after extending
// it, and 0 once it is gone. (For a Redisson RLock taken with package
// scripts, the renewal is scripts.Renew().)
var renew = redis.NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
	redis.call('pexpire', KEYS[1], ARGV[2])
	return 1
end
return 0`)

// Keep a lock of your own alive for as long as you hold it, and learn if
// it is lost. One watchdog renews every lease of a process, in a few
// pipelines an interval however many there are.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()

	const lease = 500 * time.Millisecond
	w, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease}) // renews every lease/3
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	// Take the lock, with the lease the watchdog keeps extending.
	name, token := "reports:"+uuid.NewString(), uuid.NewString()
	sent := time.Now() // the lease runs from when the acquire was sent
	if ok, err := rdb.SetNX(ctx, name, token, lease).Result(); err != nil || !ok {
		log.Fatal("not acquired: ", err)
	}
	lost := make(chan error, 1)
	l, err := w.Watch(watchdog.Renewal{Script: renew, Keys: []string{name}, Args: []any{token, lease.Milliseconds()}},
		sent, func(reason error) { lost <- reason }) // must not block
	if err != nil {
		log.Fatal(err)
	}

	// Work for longer than the lease: the lock stays.
	time.Sleep(2 * lease)
	fmt.Println("held after two leases:", rdb.Get(ctx, name).Val() == token)

	// Someone deletes the lock: the next renewal finds it gone.
	rdb.Del(ctx, name)
	reason := <-lost
	fmt.Println("lost:", reason, errors.Is(reason, watchdog.ErrGone))

	// Stop ends a lease that is not lost: call it when you unlock.
	l.Stop()
	// Output:
	// held after two leases: true
	// lost: watchdog: renewal found the lock gone true
}

// One watchdog a process, with Redisson's lease and a logger told of
// failed rounds.
func ExampleNew() {
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	defer rdb.Close()

	w, err := watchdog.New(rdb, &watchdog.Options{Timeout: 30 * time.Second, Logger: slog.Default()})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
}

// Keep a Redisson RLock, taken with package scripts, alive until you
// release it.
func ExampleWatchdog_Watch() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()

	const lease = 300 * time.Millisecond
	w, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	// The keys and arguments are those package scripts documents; the
	// owner field's client id is a version-4 UUID, as Redisson's.
	name, owner := "orders:"+uuid.NewString(), uuid.NewString()+":1"
	sent := time.Now()
	reply, err := scripts.Acquire().Run(ctx, rdb, []string{name, "relock_lock_waiters:{" + name + "}"},
		lease.Milliseconds(), owner, "0").Result()
	if err != nil || reply != int64(1) {
		log.Fatal("not acquired: ", reply, err)
	}
	l, err := w.Watch(watchdog.Renewal{Script: scripts.Renew(), Keys: []string{name}, Args: []any{lease.Milliseconds(), owner}},
		sent, func(reason error) { log.Print("lock lost: ", reason) })
	if err != nil {
		log.Fatal(err)
	}

	time.Sleep(3 * lease)
	fmt.Println("held:", rdb.HExists(ctx, name, owner).Val())

	// Release: stop the lease first, so that no renewal runs after.
	l.Stop()
	reply, err = scripts.Unlock().Run(ctx, rdb, []string{name, "redisson_lock__channel:{" + name + "}", "relock_lock_waiters:{" + name + "}"},
		lease.Milliseconds(), owner, "PUBLISH", "0").Result()
	fmt.Println("released:", reply, err)
	// Output:
	// held: true
	// released: 1 <nil>
}

// A lease of its own: the renewal sets a lease other than the
// watchdog's, which renews it every third of that.
func ExampleRenewal() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()

	w, err := watchdog.New(rdb, nil) // relock.DefaultWatchdogTimeout, 30 s
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	const lease = 300 * time.Millisecond
	name, token := "jobs:"+uuid.NewString(), uuid.NewString()
	sent := time.Now()
	if ok, err := rdb.SetNX(ctx, name, token, lease).Result(); err != nil || !ok {
		log.Fatal("not acquired: ", err)
	}
	r := watchdog.Renewal{
		Script:  renew,
		Keys:    []string{name},
		Args:    []any{token, lease.Milliseconds()},
		Timeout: lease,
	}
	l, err := w.Watch(r, sent, func(reason error) { log.Print("lock lost: ", reason) })
	if err != nil {
		log.Fatal(err)
	}
	defer l.Stop()

	time.Sleep(3 * lease)
	fmt.Println("held:", rdb.Get(ctx, name).Val() == token)
	// Output:
	// held: true
}

// A renewal that keeps failing (here a script that errors, as a Redis
// that does not answer would) is not a loss by itself: the lease is
// reported lost, with ErrExpired, a margin before the server could
// expire the lock.
func ExampleOptions_margin() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()

	const lease = 600 * time.Millisecond
	if _, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease, Margin: lease}); err != nil {
		fmt.Println(err)
	}
	w, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease, Margin: 200 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	failing := redis.NewScript(`return redis.error_reply('ERR unavailable')`)
	lost := make(chan error, 1)
	sent := time.Now()
	if _, err := w.Watch(watchdog.Renewal{Script: failing, Keys: []string{"jobs:" + uuid.NewString()}},
		sent, func(reason error) { lost <- reason }); err != nil {
		log.Fatal(err)
	}
	reason := <-lost
	fmt.Println("expired:", errors.Is(reason, watchdog.ErrExpired), "before the lease:", time.Since(sent) < lease)
	// Output:
	// watchdog: Margin 600ms not in [0, Timeout/2 = 300ms): relock: invalid argument
	// expired: true before the lease: true
}

// After Close, the watchdog renews nothing, and Watch fails.
func ExampleWatchdog_Close() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()

	w, err := watchdog.New(rdb, nil) // relock.DefaultWatchdogTimeout, 30 s
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	_, err = w.Watch(watchdog.Renewal{Script: renew, Keys: []string{"jobs:" + uuid.NewString()}},
		time.Now(), func(error) {})
	fmt.Println(err, errors.Is(err, watchdog.ErrClosed))
	// Output:
	// relock: closed true
}

// A stopped lease is renewed no more, and its loss is never reported.
func ExampleLease_Stop() {
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	ctx := context.Background()

	const lease = 300 * time.Millisecond
	w, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	name, token := "jobs:"+uuid.NewString(), uuid.NewString()
	sent := time.Now()
	if ok, err := rdb.SetNX(ctx, name, token, lease).Result(); err != nil || !ok {
		log.Fatal("not acquired: ", err)
	}
	lost := make(chan error, 1)
	l, err := w.Watch(watchdog.Renewal{Script: renew, Keys: []string{name}, Args: []any{token, lease.Milliseconds()}},
		sent, func(reason error) { lost <- reason })
	if err != nil {
		log.Fatal(err)
	}

	l.Stop()
	time.Sleep(2 * lease)
	fmt.Println("expired:", rdb.Exists(ctx, name).Val() == 0, "lost called:", len(lost) > 0)
	// Output:
	// expired: true lost called: false
}

// batchSizes is a go-redis hook that reports the size of each pipeline.
type batchSizes chan int

func (batchSizes) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (batchSizes) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h batchSizes) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		select {
		case h <- len(cmds):
		default:
		}
		return next(ctx, cmds)
	}
}

// Many leases are renewed in batches of at most Options.BatchSize renewals,
// each one pipeline with a deadline of its own, spread over the renewal
// interval.
func ExampleOptions_batchSize() {
	// ContextTimeoutEnabled: the watchdog renews through this client
	// itself, so the hook sees its batches.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
	defer rdb.Close()
	ctx := context.Background()

	const lease = 600 * time.Millisecond
	if _, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease, BatchSize: -1}); err != nil {
		fmt.Println(err)
	}
	w, err := watchdog.New(rdb, &watchdog.Options{Timeout: lease, BatchSize: 4})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	names := make([]string, 10)
	token := uuid.NewString()
	sent := time.Now()
	for i := range names {
		names[i] = "batch:" + uuid.NewString()
		if err := rdb.Set(ctx, names[i], token, lease).Err(); err != nil {
			log.Fatal(err)
		}
	}
	sizes := make(batchSizes, 100)
	rdb.AddHook(sizes)
	for _, name := range names {
		r := watchdog.Renewal{Script: renew, Keys: []string{name}, Args: []any{token, lease.Milliseconds()}}
		if _, err := w.Watch(r, sent, func(error) {}); err != nil {
			log.Fatal(err)
		}
	}

	time.Sleep(lease)
	largest := 0
	for len(sizes) > 0 {
		largest = max(largest, <-sizes)
	}
	held := 0
	for _, name := range names {
		if rdb.Get(ctx, name).Val() == token {
			held++
		}
	}
	fmt.Println("largest batch:", largest, "held:", held)
	// Output:
	// watchdog: negative BatchSize -1: relock: invalid argument
	// largest batch: 4 held: 10
}
