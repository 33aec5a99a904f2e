package lua

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
	//go:embed permits_undo.lua
	permitsUndoSrc string
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
	permitsAcquire   = permits(permitsAcquireSrc)
	permitsRelease   = permits(permitsReleaseSrc)
	permitsUndo      = permits(permitsUndoSrc)
	permitsUpdate    = permits(permitsUpdateSrc)
	permitsAvailable = permits(permitsAvailableSrc)
	permitsSet       = permits(permitsSetSrc)
	permitsAdd       = permits(permitsAddSrc)
)

func permits(src string) *redis.Script {
	return redis.NewScript(link(src, semaphorePrelude, permitsPrelude))
}

// PermitsAcquire returns the script that takes one expirable permit
// (Redisson RPermitExpirableSemaphore); ParseWait reads its reply when
// it took none and waits. It replies 0, and changes nothing, for a
// permit id that PermitsUndo recorded as given up: the acquire runs
// late, after its caller was told it failed. The permits' scripts share
// the KEYS that permits_prelude.lua documents.
func PermitsAcquire() *redis.Script { return permitsAcquire }

// PermitsRelease returns the script that gives back one expirable permit
// by its id.
func PermitsRelease() *redis.Script { return permitsRelease }

// PermitsUndo returns the script that gives back one expirable permit
// by its id, as PermitsRelease does, for an acquire whose caller was
// told it failed, and records the id as given up in relock's own key,
// so that the acquire, if it runs after that, takes nothing.
func PermitsUndo() *redis.Script { return permitsUndo }

// PermitsUpdate returns the script that moves a held permit's expiry
// (Redisson's updateLeaseTime), also a renew.Renewal's script: 1 while
// the permit is held, 0 once it is not.
func PermitsUpdate() *redis.Script { return permitsUpdate }

// PermitsAvailable returns the script that reads the count of available
// expirable permits, reclaiming expired ones first.
func PermitsAvailable() *redis.Script { return permitsAvailable }

// PermitsSet returns the script that sets the count of available
// expirable permits if none is set.
func PermitsSet() *redis.Script { return permitsSet }

// PermitsAdd returns the script that adds to the count of available
// expirable permits (a negative delta takes away).
func PermitsAdd() *redis.Script { return permitsAdd }
