// Fence shows a fencing token refusing the late write of a lock holder
// that was paused past its lease.
//
// Holder 1 takes a fenced lock ("invoices:7", a one-second lease) and
// writes the invoice's total with its token. Then it stalls, as a
// process does in a long GC pause or a frozen VM: it neither renews nor
// looks at its lock's context. Its lease runs out, holder 2 takes the
// lock with the next token and writes. When holder 1 resumes, it goes on
// with the write it was about to make, with its old token: the guard in
// Redis (package fence) refuses it with fence.ErrStale, and the total
// stays holder 2's. Without the guard, holder 1's write would have
// overwritten it.
//
// By default it runs on an in-process miniredis whose keys expire in
// real time, and needs nothing but Go:
//
//	go run ./examples/fence
//	go run ./examples/fence -redis localhost:6379
//
// With -redis it uses the keys invoices:7 (the lock),
// redisson_lock_token:{invoices:7} (its token counter),
// relock_fence:{invoices:7} (the last token written) and
// {invoices:7}:total on that server, and deletes them at the end. It
// exits with status 1 if the late write was not refused.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fence"
	"github.com/relock-go/relock/reentrant"
)

const (
	resource = "invoices:7"         // the lock's name, and the guard's resource
	total    = "{invoices:7}:total" // the resource's hash tag: one cluster slot with its token
	lease    = time.Second          // a fixed lease, which a pause can outlast
	counter  = "redisson_lock_token:{invoices:7}"
	last     = "relock_fence:{invoices:7}"
)

func main() {
	addr := flag.String("redis", "", "Redis address (default: an in-process miniredis)")
	flag.Parse()
	if err := run(context.Background(), *addr); err != nil {
		fmt.Fprintln(os.Stderr, "fence:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string) error {
	if addr == "" {
		m, err := miniredis.Run()
		if err != nil {
			return err
		}
		defer m.Close()
		m.ClockTTL(true) // keys expire as real time passes, as on a server
		addr = m.Addr()
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	defer rdb.Del(context.Background(), resource, counter, last, total)
	guard := fence.NewRedis(rdb)

	// Each holder stands for a process of its own, with its own clients.
	holder := func() (*reentrant.Mutex, func(), error) {
		r := redis.NewClient(&redis.Options{Addr: addr})
		rc, err := relock.New(r, nil)
		if err != nil {
			r.Close()
			return nil, nil, err
		}
		mu := reentrant.New(rc, resource, &reentrant.Options{Fencing: true, Lease: lease})
		return mu, func() { rc.Close(); r.Close() }, nil
	}
	first, closeFirst, err := holder()
	if err != nil {
		return err
	}
	defer closeFirst()
	second, closeSecond, err := holder()
	if err != nil {
		return err
	}
	defer closeSecond()

	lctx1, err := first.Lock(ctx)
	if err != nil {
		return err
	}
	defer first.Unlock(lctx1) // relock.ErrNotHeld by then: the lease ran out
	token1, err := first.Token(lctx1)
	if err != nil {
		return err
	}
	if err := guard.Set(ctx, resource, token1, total, "100.00", 0); err != nil {
		return err
	}
	fmt.Printf("holder 1: lock taken, token %d; writes total = 100.00: ok\n", token1)
	fmt.Printf("holder 1: paused (a GC pause, a frozen VM) past its %v lease\n", lease)

	// Meanwhile holder 2 waits for the lock: holder 1's lease runs out.
	start := time.Now()
	lctx2, err := second.Lock(ctx)
	if err != nil {
		return err
	}
	defer second.Unlock(lctx2)
	token2, err := second.Token(lctx2)
	if err != nil {
		return err
	}
	if err := guard.Set(ctx, resource, token2, total, "120.00", 0); err != nil {
		return err
	}
	fmt.Printf("holder 2: lock taken after %.1fs, token %d; writes total = 120.00: ok\n",
		time.Since(start).Round(100*time.Millisecond).Seconds(), token2)

	// Holder 1 resumes where it stopped, without looking at its context
	// (which its lease's end cancelled), and makes its next write.
	fmt.Printf("holder 1: resumes; its lock context says: %v\n", context.Cause(lctx1))
	err = guard.Set(ctx, resource, token1, total, "100.00 + late fee", 0)
	fmt.Printf("holder 1: writes total with token %d: %v\n", token1, err)
	got, gerr := rdb.Get(ctx, total).Result()
	if gerr != nil {
		return gerr
	}
	fmt.Printf("total = %s\n", got)
	if !errors.Is(err, fence.ErrStale) || got != "120.00" {
		return errors.New("the late write was not refused")
	}
	return nil
}
