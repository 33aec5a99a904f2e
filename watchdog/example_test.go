package watchdog_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/watchdog"
)

// The example runs against the test server started by TestMain. In your
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
// it is lost. One watchdog renews every lease of a process in one
// pipeline a round.
func Example() {
	addr := srv.Addr // in your code: addr := "localhost:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	ctx := context.Background()

	const lease = 500 * time.Millisecond
	w := watchdog.New(rdb, lease, nil) // renews every lease/3
	defer w.Stop()

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
	fmt.Println("lost:", <-lost)

	// Stop ends a lease that is not lost: call it when you unlock.
	l.Stop()
	// Output:
	// held after two leases: true
	// lost: watchdog: renewal found the lock gone
}
