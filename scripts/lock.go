package scripts

import (
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
)

// Acquire returns the script that takes or re-enters a reentrant lock
// (Redisson RLock).
//
//	KEYS[1]  the lock's name, a hash of owner field = hold count
//	KEYS[2]  relock's registry of waiters, "relock_lock_waiters:{<name>}"
//	ARGV[1]  lease
//	ARGV[2]  owner field
//	ARGV[3]  "0" (relock's waiters pass other values)
//
// It replies 1 when the caller now holds the lock (one more hold, the
// lease reset); otherwise {pttl, 0}, pttl being the lease the lock has
// left in milliseconds. A waiter listens on
// "redisson_lock__channel:{<name>}", where Unlock publishes, and tries
// again when told or when pttl has passed.
func Acquire() *redis.Script { return lua.Acquire() }

// Unlock returns the script that releases one hold of a reentrant lock
// and, at the last hold, deletes it and wakes its waiters.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  its channel, "redisson_lock__channel:{<name>}"
//	KEYS[3]  relock's registry of waiters, "relock_lock_waiters:{<name>}"
//	ARGV[1]  lease, set again while holds remain
//	ARGV[2]  owner field
//	ARGV[3]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//	ARGV[4]  "0"; "1" when the caller has one hold only, which then goes
//	         without its count being read
//
// It replies nil when the caller holds no hold, and changes nothing; 0
// when holds remain; 1 when this was the last: the lock is deleted, "0"
// is published on its channel for Redisson's waiters, and relock's
// longest waiter is woken (or granted the lock).
func Unlock() *redis.Script { return lua.Unlock() }

// ForceUnlock returns the script that deletes a reentrant lock whoever
// holds it, and wakes its waiters as Unlock does.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  its channel, "redisson_lock__channel:{<name>}"
//	KEYS[3]  relock's registry of waiters, "relock_lock_waiters:{<name>}"
//	ARGV[1]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//	ARGV[2]  lease of a hold granted to relock's longest waiter
//
// It replies {1, <field>...} when a lock was deleted, the fields being
// its holders' owner fields, and {0} when there was none.
func ForceUnlock() *redis.Script { return lua.ForceUnlock() }

// Renew returns the script that extends the lease of a lock while the
// caller holds it: a reentrant lock's, a fair lock's, or a read/write
// lock's write side (whose owner field ends in ":write").
//
//	KEYS[1]  the lock's name
//	ARGV[1]  lease
//	ARGV[2]  owner field
//
// It replies 1 when renewed and 0 when the lock is gone or another
// owner's, as a watchdog.Renewal's script must.
func Renew() *redis.Script { return lua.Renew() }
