package lua

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed group_prelude.lua
	groupPrelude string
	//go:embed group_acquire.lua
	groupAcquireSrc string
	//go:embed group_unlock.lua
	groupUnlockSrc string
	//go:embed group_renew.lua
	groupRenewSrc string
	//go:embed group_force_unlock.lua
	groupForceUnlockSrc string
	//go:embed group_held.lua
	groupHeldSrc string
)

// Group lock (Redisson RedissonFasterMultiLock) operations: many values
// locked as fields of one hash, the group, all or none in one call. ARGV
// carries the values' fields, each value's hash as Redisson computes it;
// package grouplock computes them.
var (
	groupAcquire     = redis.NewScript(link(groupAcquireSrc, relockPrelude, groupPrelude))
	groupUnlock      = redis.NewScript(link(groupUnlockSrc, groupPrelude))
	groupRenew       = redis.NewScript(link(groupRenewSrc, groupPrelude))
	groupForceUnlock = redis.NewScript(link(groupForceUnlockSrc, groupPrelude))
	groupHeld        = redis.NewScript(link(groupHeldSrc, groupPrelude))
)

// GroupAcquire returns the script that takes or re-enters every value of
// a group lock, or none.
func GroupAcquire() *redis.Script { return groupAcquire }

// GroupUnlock returns the script that releases one hold of every value of
// a group lock, waking the group's waiters when a value is freed.
func GroupUnlock() *redis.Script { return groupUnlock }

// GroupRenew returns the script that extends the lease of every value of
// a group lock while its owner holds them all (the watchdog's renewal).
func GroupRenew() *redis.Script { return groupRenew }

// GroupForceUnlock returns the script that frees values of a group lock
// whoever holds them, and replies with their holders.
func GroupForceUnlock() *redis.Script { return groupForceUnlock }

// GroupHeld returns the script that counts the values of a group lock
// that are held, by anyone or by one owner.
func GroupHeld() *redis.Script { return groupHeld }
