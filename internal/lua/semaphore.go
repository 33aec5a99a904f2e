package lua

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
	//go:embed semaphore_ack.lua
	semaphoreAckSrc string
	//go:embed semaphore_undo.lua
	semaphoreUndoSrc string
)

// Semaphore (Redisson RSemaphore) operations: the available count is a
// STRING at the semaphore's name, and increases are published on
// redisson_sc:{<name>}. The headers of the .lua files document each one's
// KEYS, ARGV and replies. All but SemaphoreDrain, which wakes nobody, are
// preceded by semaphore_prelude.lua, which keeps relock's registry of the
// semaphore's waiters and wakes the waiters that permits can satisfy;
// SemaphoreGiveUp serves the expirable permits' waiters too.
var (
	semaphoreAcquire = semaphore(semaphoreAcquireSrc)
	semaphoreRelease = semaphore(semaphoreReleaseSrc)
	semaphoreAdd     = semaphore(semaphoreAddSrc)
	semaphoreTrySet  = semaphore(semaphoreTrySetSrc)
	semaphoreGiveUp  = semaphore(semaphoreGiveUpSrc)
	semaphoreDrain   = redis.NewScript(semaphoreDrainSrc)
	semaphoreAck     = semaphore(semaphoreAckSrc)
	semaphoreUndo    = semaphore(semaphoreUndoSrc)
)

func semaphore(src string) *redis.Script {
	return redis.NewScript(link(src, semaphorePrelude))
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

// SemaphoreAcquire returns the script that takes permits from a
// semaphore (Redisson RSemaphore), all or none; ParseWait reads its reply
// when it took none. The semaphore's scripts share the KEYS that
// semaphore_prelude.lua documents.
func SemaphoreAcquire() *redis.Script { return semaphoreAcquire }

// SemaphoreRelease returns the script that returns permits to a
// semaphore and wakes the waiters they can satisfy.
func SemaphoreRelease() *redis.Script { return semaphoreRelease }

// SemaphoreAdd returns the script that changes a semaphore's available
// count by a delta (Redisson's addPermits).
func SemaphoreAdd() *redis.Script { return semaphoreAdd }

// SemaphoreTrySet returns the script that sets a semaphore's available
// count if it has none (Redisson's trySetPermits).
func SemaphoreTrySet() *redis.Script { return semaphoreTrySet }

// SemaphoreGiveUp returns the script a relock waiter of a semaphore, or
// of expirable permits, runs when its wait ends without its permits.
func SemaphoreGiveUp() *redis.Script { return semaphoreGiveUp }

// SemaphoreDrain returns the script that takes every available permit of
// a semaphore (Redisson's drainPermits). It wakes nobody.
func SemaphoreDrain() *redis.Script { return semaphoreDrain }

// SemaphoreAck returns the script a relock client runs to acknowledge
// the permits handed to its waiters when none of its acquires or
// releases carried the acknowledgement soon enough.
func SemaphoreAck() *redis.Script { return semaphoreAck }

// SemaphoreUndo returns the script a relock client runs for an acquire
// whose reply it never read: the permits it took go back, or, when it
// has not run yet, it will take nothing.
func SemaphoreUndo() *redis.Script { return semaphoreUndo }
