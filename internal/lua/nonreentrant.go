package lua

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

//go:embed nonreentrant_acquire.lua
var nonReentrantAcquireSrc string

// NonReentrantAcquire takes a non-reentrant lock (Redisson
// RedissonNonReentrantLock), refusing an owner that holds it already. Like
// the reentrant lock's scripts it is preceded by relock_prelude.lua and
// waiters_prelude.lua; the non-reentrant lock releases, gives up and is
// renewed with the reentrant lock's Unlock, ForceUnlock, GiveUp and Renew,
// its record being the same hash.
var nonReentrantAcquire = reentrant(nonReentrantAcquireSrc)

// NonReentrantAcquire returns the script that takes a non-reentrant lock
// (Redisson RedissonNonReentrantLock), refusing an owner that holds it
// already. Its record is a reentrant lock's hash: it is released, given
// up, force-unlocked and renewed with Unlock, GiveUp, ForceUnlock and
// Renew.
func NonReentrantAcquire() *redis.Script { return nonReentrantAcquire }
