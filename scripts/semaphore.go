package scripts

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed semaphore_acquire.lua
	semaphoreAcquireSrc string
	//go:embed semaphore_release.lua
	semaphoreReleaseSrc string
	//go:embed semaphore_add.lua
	semaphoreAddSrc string
	//go:embed semaphore_try_set.lua
	semaphoreTrySetSrc string
	//go:embed semaphore_drain.lua
	semaphoreDrainSrc string
)

// Semaphore (Redisson RSemaphore) operations: the available count is a
// STRING at the semaphore's name, and increases are published on
// redisson_sc:{<name>}. The headers of the .lua files document each one's
// KEYS, ARGV and replies; none needs a prelude.
var (
	SemaphoreAcquire = redis.NewScript(semaphoreAcquireSrc)
	SemaphoreRelease = redis.NewScript(semaphoreReleaseSrc)
	SemaphoreAdd     = redis.NewScript(semaphoreAddSrc)
	SemaphoreTrySet  = redis.NewScript(semaphoreTrySetSrc)
	SemaphoreDrain   = redis.NewScript(semaphoreDrainSrc)
)
