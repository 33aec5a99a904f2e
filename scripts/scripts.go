// Package scripts holds relock's Lua scripts, one operation a file, each
// embedded and wrapped in a *redis.Script so calls go out as EVALSHA and fall
// back to EVAL when the server answers NOSCRIPT.
//
// Every script names its KEYS, ARGV and replies in its header. The fair
// lock's scripts share a prelude of helpers, prepended in Go: Lua scripts
// cannot include one another. Scripts touch
// only keys passed in KEYS, and every key a script touches shares the lock
// key's hash slot, so they run unchanged on Redis Cluster. Channels are
// passed in KEYS too; the publish command (PUBLISH or SPUBLISH) is an ARGV
// value. Key and channel names follow Redisson's layout so that relock and
// Redisson clients can share a lock.
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
// document each one's KEYS, ARGV and replies.
var (
	Acquire       = redis.NewScript(acquireSrc)
	FencedAcquire = redis.NewScript(fencedAcquireSrc)
	Unlock        = redis.NewScript(unlockSrc)
	ForceUnlock   = redis.NewScript(forceUnlockSrc)
	Renew         = redis.NewScript(renewSrc)
)

// Fair lock (Redisson RFairLock) operations. Each is fair_prelude.lua,
// which documents their common KEYS and helpers, followed by the
// operation's own file.
var (
	FairAcquire     = redis.NewScript(fairPrelude + fairAcquireSrc)
	FairUnlock      = redis.NewScript(fairPrelude + fairUnlockSrc)
	FairGiveUp      = redis.NewScript(fairPrelude + fairGiveUpSrc)
	FairForceUnlock = redis.NewScript(fairPrelude + fairForceUnlockSrc)
)

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
