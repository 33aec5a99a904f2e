package scripts

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed spin_acquire.lua
	spinAcquireSrc string
	//go:embed spin_unlock.lua
	spinUnlockSrc string
	//go:embed spin_force_unlock.lua
	spinForceUnlockSrc string
)

// Spin lock (Redisson RSpinLock) operations: the reentrant lock's record
// without pub/sub or relock's registry of waiters, whose waiters poll.
// The watchdog renews a spin lock with Renew; SpinForceUnlock deletes it
// as a plain DEL does, and publishes nothing either.
var (
	SpinAcquire     = redis.NewScript(spinAcquireSrc)
	SpinUnlock      = redis.NewScript(spinUnlockSrc)
	SpinForceUnlock = redis.NewScript(spinForceUnlockSrc)
)
