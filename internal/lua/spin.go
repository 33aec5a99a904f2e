package lua

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
	spinAcquire     = redis.NewScript(link(spinAcquireSrc, relockPrelude))
	spinUnlock      = redis.NewScript(spinUnlockSrc)
	spinForceUnlock = redis.NewScript(spinForceUnlockSrc)
)

// SpinAcquire returns the script that takes or re-enters a spin lock
// (Redisson RSpinLock), whose record is a reentrant lock's hash and whose
// waiters poll: it registers and publishes nothing. A spin lock is
// renewed with Renew.
func SpinAcquire() *redis.Script { return spinAcquire }

// SpinUnlock returns the script that releases one hold of a spin lock,
// publishing nothing.
func SpinUnlock() *redis.Script { return spinUnlock }

// SpinForceUnlock returns the script that deletes a spin lock whoever
// holds it, as a plain DEL does, and replies with its holders.
func SpinForceUnlock() *redis.Script { return spinForceUnlock }
