package scripts

import (
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed semaphore_prelude.lua
	semaphorePrelude string
	//go:embed semaphore_acquire.lua
	semaphoreAcquireSrc string
	//go:embed semaphore_release.lua
	semaphoreReleaseSrc string
	//go:embed semaphore_add.lua
	semaphoreAddSrc string
	//go:embed semaphore_try_set.lua
	semaphoreTrySetSrc string
	//go:embed semaphore_give_up.lua
	semaphoreGiveUpSrc string
	//go:embed semaphore_drain.lua
	semaphoreDrainSrc string
)

// Semaphore (Redisson RSemaphore) operations: the available count is a
// STRING at the semaphore's name, and increases are published on
// redisson_sc:{<name>}. The headers of the .lua files document each one's
// KEYS, ARGV and replies. All but SemaphoreDrain, which wakes nobody, are
// preceded by semaphore_prelude.lua, which keeps relock's registry of the
// semaphore's waiters and wakes the waiters that permits can satisfy;
// SemaphoreGiveUp serves the expirable permits' waiters too.
var (
	SemaphoreAcquire = semaphore(semaphoreAcquireSrc)
	SemaphoreRelease = semaphore(semaphoreReleaseSrc)
	SemaphoreAdd     = semaphore(semaphoreAddSrc)
	SemaphoreTrySet  = semaphore(semaphoreTrySetSrc)
	SemaphoreGiveUp  = semaphore(semaphoreGiveUpSrc)
	SemaphoreDrain   = redis.NewScript(semaphoreDrainSrc)
)

func semaphore(src string) *redis.Script {
	return redis.NewScript(semaphorePrelude + src)
}

// A Wait is what SemaphoreAcquire and PermitsAcquire reply when the
// caller did not take its permits.
type Wait struct {
	// Sleep is the longest the waiter sleeps before it tries again.
	Sleep time.Duration
	// Watcher reports that the waiter is the semaphore's watcher: it
	// must listen on the shared channel too.
	Watcher bool
	// Registered is the waiter's registration time, which its next
	// attempts pass back; 0 when it is not registered.
	Registered int64
}

// ParseWait reads an acquire's reply {ms, watcher, registration}.
func ParseWait(reply any) (Wait, error) {
	r, ok := reply.([]any)
	if !ok || len(r) != 3 {
		return Wait{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	ms, ok1 := r[0].(int64)
	watcher, ok2 := r[1].(int64)
	reg, ok3 := r[2].(int64)
	if !ok1 || !ok2 || !ok3 {
		return Wait{}, fmt.Errorf("unexpected acquire reply %v", reply)
	}
	return Wait{Sleep: time.Duration(ms) * time.Millisecond, Watcher: watcher == 1, Registered: reg}, nil
}
