package scripts

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed permits_prelude.lua
	permitsPrelude string
	//go:embed permits_acquire.lua
	permitsAcquireSrc string
	//go:embed permits_release.lua
	permitsReleaseSrc string
	//go:embed permits_update.lua
	permitsUpdateSrc string
	//go:embed permits_available.lua
	permitsAvailableSrc string
	//go:embed permits_set.lua
	permitsSetSrc string
	//go:embed permits_add.lua
	permitsAddSrc string
)

// Expirable permits (Redisson RPermitExpirableSemaphore) operations. Each
// is semaphore_prelude.lua (relock's registry of waiters, which the
// permits share with RSemaphore's), permits_prelude.lua, which documents
// their common KEYS and the reclaiming of expired permits, and the
// operation's own file. PermitsUpdate is also the watchdog's renewal of a
// held permit. A waiter gives up with SemaphoreGiveUp.
var (
	PermitsAcquire   = permits(permitsAcquireSrc)
	PermitsRelease   = permits(permitsReleaseSrc)
	PermitsUpdate    = permits(permitsUpdateSrc)
	PermitsAvailable = permits(permitsAvailableSrc)
	PermitsSet       = permits(permitsSetSrc)
	PermitsAdd       = permits(permitsAddSrc)
)

func permits(src string) *redis.Script {
	return redis.NewScript(semaphorePrelude + permitsPrelude + src)
}
