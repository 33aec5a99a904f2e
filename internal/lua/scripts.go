package lua

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed acquire.lua
	acquireSrc string
	//go:embed fenced_acquire.lua
	fencedAcquireSrc string
	//go:embed unlock.lua
	unlockSrc string
	//go:embed force_unlock.lua
	forceUnlockSrc string
	//go:embed renew.lua
	renewSrc string
	//go:embed give_up.lua
	giveUpSrc string
	//go:embed bury.lua
	burySrc string

	//go:embed relock_prelude.lua
	relockPrelude string
	//go:embed waiters_prelude.lua
	waitersPrelude string

	//go:embed fair_prelude.lua
	fairPrelude string
	//go:embed fair_acquire.lua
	fairAcquireSrc string
	//go:embed fair_unlock.lua
	fairUnlockSrc string
	//go:embed fair_give_up.lua
	fairGiveUpSrc string
	//go:embed fair_force_unlock.lua
	fairForceUnlockSrc string

	//go:embed rw_prelude.lua
	rwPrelude string
	//go:embed rw_read_acquire.lua
	rwReadAcquireSrc string
	//go:embed rw_write_acquire.lua
	rwWriteAcquireSrc string
	//go:embed rw_read_unlock.lua
	rwReadUnlockSrc string
	//go:embed rw_write_unlock.lua
	rwWriteUnlockSrc string
	//go:embed rw_read_renew.lua
	rwReadRenewSrc string
	//go:embed rw_force_unlock.lua
	rwForceUnlockSrc string
)

// Reentrant lock (Redisson RLock) operations. The headers of the .lua files
// document each one's KEYS, ARGV and replies. All but Renew are preceded
// by relock_prelude.lua and waiters_prelude.lua, which keep relock's
// registry of waiters.
var (
	acquire       = reentrant(acquireSrc)
	fencedAcquire = reentrant(fencedAcquireSrc)
	unlock        = reentrant(unlockSrc)
	forceUnlock   = reentrant(forceUnlockSrc)
	giveUp        = reentrant(giveUpSrc)
	renew         = redis.NewScript(renewSrc)
)

// Fair lock (Redisson RFairLock) operations. Each is relock_prelude.lua
// and fair_prelude.lua, which documents their common KEYS and helpers,
// followed by the operation's own file.
var (
	fairAcquire     = fair(fairAcquireSrc)
	fairUnlock      = fair(fairUnlockSrc)
	fairGiveUp      = fair(fairGiveUpSrc)
	fairForceUnlock = fair(fairForceUnlockSrc)
)

func reentrant(src string) *redis.Script {
	return redis.NewScript(link(src, relockPrelude, waitersPrelude))
}

func fair(src string) *redis.Script {
	return redis.NewScript(link(src, relockPrelude, fairPrelude))
}

// Read/write lock (Redisson RReadWriteLock) operations. The write side is
// renewed with Renew, like a reentrant lock.
var (
	rwReadAcquire  = redis.NewScript(link(rwReadAcquireSrc, relockPrelude, rwPrelude))
	rwWriteAcquire = redis.NewScript(link(rwWriteAcquireSrc, relockPrelude))
	rwReadUnlock   = redis.NewScript(rwReadUnlockSrc)
	rwWriteUnlock  = redis.NewScript(rwWriteUnlockSrc)
	rwReadRenew    = redis.NewScript(link(rwReadRenewSrc, rwPrelude))
	rwForceUnlock  = redis.NewScript(rwForceUnlockSrc)
)

// Acquire returns the script that takes or re-enters a reentrant lock
// (Redisson RLock): 1 when the caller holds it, otherwise {pttl, foreign}.
// Its waiters listen on the lock's channel, redisson_lock__channel:{<name>},
// where Unlock publishes.
func Acquire() *redis.Script { return acquire }

// FencedAcquire returns Acquire's counterpart for a lock with fencing
// tokens (Redisson RFencedLock): each acquire also draws a token from a
// counter that only grows.
func FencedAcquire() *redis.Script { return fencedAcquire }

// Unlock returns the script that releases one hold of a reentrant lock
// (also a fenced or non-reentrant one) and, at the last hold, deletes it
// and wakes its waiters.
func Unlock() *redis.Script { return unlock }

// ForceUnlock returns the script that deletes a reentrant lock whoever
// holds it, waking its waiters, and replies with its holders.
func ForceUnlock() *redis.Script { return forceUnlock }

// GiveUp returns the script a reentrant lock's waiter runs when its wait
// ends without the lock: it leaves relock's registry of waiters and passes
// on a wake-up it may have taken.
func GiveUp() *redis.Script { return giveUp }

// Renew returns the script that extends a reentrant lock's lease while
// the caller holds it (also a fenced, fair, non-reentrant or spin
// lock's, and a read/write lock's write side): 1 when renewed, 0 when
// the lock is gone or another owner's, as a watchdog.Renewal wants.
func Renew() *redis.Script { return renew }

// bury is every lock kind's, RedLock's and the group lock's: it takes
// no prelude.
var bury = redis.NewScript(burySrc)

// Bury returns the script that records an owner's acquire attempts as
// given up in relock's record of them, so that one that runs late
// changes nothing (relock_prelude.lua's late; core.Client.Bury sends
// it).
func Bury() *redis.Script { return bury }

// FairAcquire returns the script that takes, re-enters or queues for a
// fair lock (Redisson RFairLock). The fair lock's scripts share the KEYS
// that fair_prelude.lua documents. With its optional ARGV[6] "1" it is
// the acquire of the non-reentrant fair lock (Redisson
// RedissonNonReentrantFairLock), which refuses an owner that holds it
// already and shares every other script of the fair lock.
func FairAcquire() *redis.Script { return fairAcquire }

// FairUnlock returns the script that releases one hold of a fair lock
// and, at the last hold, hands it to the head of its queue.
func FairUnlock() *redis.Script { return fairUnlock }

// FairGiveUp returns the script a fair lock's waiter runs to leave its
// queue when its wait ends without the lock.
func FairGiveUp() *redis.Script { return fairGiveUp }

// FairForceUnlock returns the script that deletes a fair lock whoever
// holds it, hands it to the head of its queue, and replies with its
// holders; a free lock's queue keys it hands on, or removes.
func FairForceUnlock() *redis.Script { return fairForceUnlock }

// RWReadAcquire returns the script that takes or re-enters the read side
// of a read/write lock (Redisson RReadWriteLock).
func RWReadAcquire() *redis.Script { return rwReadAcquire }

// RWWriteAcquire returns the script that takes or re-enters the write
// side of a read/write lock. The write side is renewed with Renew.
func RWWriteAcquire() *redis.Script { return rwWriteAcquire }

// RWReadUnlock returns the script that releases one read hold of a
// read/write lock.
func RWReadUnlock() *redis.Script { return rwReadUnlock }

// RWWriteUnlock returns the script that releases one write hold of a
// read/write lock.
func RWWriteUnlock() *redis.Script { return rwWriteUnlock }

// RWReadRenew returns the script that extends the caller's read holds of
// a read/write lock: 1 when renewed, 0 when it holds none.
func RWReadRenew() *redis.Script { return rwReadRenew }

// RWForceUnlock returns the script that deletes a read/write lock
// whoever holds it, and replies with its holders.
func RWForceUnlock() *redis.Script { return rwForceUnlock }
