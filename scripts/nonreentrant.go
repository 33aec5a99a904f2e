package scripts

import _ "embed"

//go:embed nonreentrant_acquire.lua
var nonReentrantAcquireSrc string

// NonReentrantAcquire takes a non-reentrant lock (Redisson
// RedissonNonReentrantLock), refusing an owner that holds it already. Like
// the reentrant lock's scripts it is preceded by relock_prelude.lua and
// waiters_prelude.lua; the non-reentrant lock releases, gives up and is
// renewed with the reentrant lock's Unlock, ForceUnlock, GiveUp and Renew,
// its record being the same hash.
var NonReentrantAcquire = reentrant(nonReentrantAcquireSrc)
