// Package scripts holds relock's Lua scripts, one operation a file, each
// embedded and wrapped in a *redis.Script so calls go out as EVALSHA and fall
// back to EVAL when the server answers NOSCRIPT.
//
// Every script names its KEYS, ARGV and replies in its header. Scripts
// share preludes of helpers, prepended in Go: Lua scripts cannot include
// one another. Scripts touch
// only keys passed in KEYS, and every key a script touches shares the lock
// key's hash slot, so they run unchanged on Redis Cluster. Channels are
// passed in KEYS too; the publish command (PUBLISH or SPUBLISH) is an ARGV
// value. Key and channel names follow Redisson's layout so that relock and
// Redisson clients can share a lock.
//
// An acquire that takes the lock replies 1 rather than nil, where its
// other replies leave 1 free to mean that: go-redis turns a nil reply
// into the error redis.Nil, and deciding whether that error is worth a
// retry costs it some 24 allocations, more than the rest of the call.
// Replies are relock's own; Redisson never reads them.
package scripts

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
	Acquire       = reentrant(acquireSrc)
	FencedAcquire = reentrant(fencedAcquireSrc)
	Unlock        = reentrant(unlockSrc)
	ForceUnlock   = reentrant(forceUnlockSrc)
	GiveUp        = reentrant(giveUpSrc)
	Renew         = redis.NewScript(renewSrc)
)

// Fair lock (Redisson RFairLock) operations. Each is relock_prelude.lua
// and fair_prelude.lua, which documents their common KEYS and helpers,
// followed by the operation's own file.
var (
	FairAcquire     = fair(fairAcquireSrc)
	FairUnlock      = fair(fairUnlockSrc)
	FairGiveUp      = fair(fairGiveUpSrc)
	FairForceUnlock = fair(fairForceUnlockSrc)
)

func reentrant(src string) *redis.Script {
	return redis.NewScript(relockPrelude + waitersPrelude + src)
}

func fair(src string) *redis.Script {
	return redis.NewScript(relockPrelude + fairPrelude + src)
}

// Read/write lock (Redisson RReadWriteLock) operations. The write side is
// renewed with Renew, like a reentrant lock.
var (
	RWReadAcquire  = redis.NewScript(rwReadAcquireSrc)
	RWWriteAcquire = redis.NewScript(rwWriteAcquireSrc)
	RWReadUnlock   = redis.NewScript(rwReadUnlockSrc)
	RWWriteUnlock  = redis.NewScript(rwWriteUnlockSrc)
	RWReadRenew    = redis.NewScript(rwReadRenewSrc)
	RWForceUnlock  = redis.NewScript(rwForceUnlockSrc)
)
