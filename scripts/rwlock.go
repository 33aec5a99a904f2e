package scripts

import (
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
)

// RWReadAcquire returns the script that takes or re-enters the read side
// of a read/write lock (Redisson RReadWriteLock).
//
// The lock is a hash at its name: field "mode" is "read" or "write", each
// reader's owner field counts its read holds, and the writer's, "<owner
// field>:write", its write holds. Read hold i of a reader also has a key
// of its own with the hold's lease, "<timeout prefix>:<i>", the reader's
// timeout prefix being "{<name>}:<owner field>:rwlock_timeout". Both
// sides publish on "redisson_rwlock:{<name>}", where waiters of either
// side listen. Renew extends the write side's lease, RWReadRenew the read
// side's.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  the caller's timeout prefix
//	KEYS[3]  optional: relock's record of given-up attempts,
//	         "relock_lock_gone:{<name>}", with ARGV[4] the attempt's number
//	KEYS[4]  optional, with KEYS[3]: every reader's timeout prefix's
//	         start, "{<name>}", to drop the fields of readers whose
//	         timeout keys are all gone (readers that died)
//	ARGV[1]  lease
//	ARGV[2]  the caller's reader field, its owner field
//	ARGV[3]  the caller's writer field: a writer may also take read holds
//
// It replies 1 when the caller holds one more read hold; otherwise
// {pttl}: a writer holds the lock, and pttl is its PTTL in milliseconds.
func RWReadAcquire() *redis.Script { return lua.RWReadAcquire() }

// RWWriteAcquire returns the script that takes or re-enters the write
// side of a read/write lock.
//
//	KEYS[1]  the lock's name
//	ARGV[1]  lease
//	ARGV[2]  the caller's writer field, "<owner field>:write"
//	ARGV[3]  the caller's reader field
//
// It replies 1 when the caller holds one more write hold; -3 when the
// caller holds read holds, an upgrade that can never succeed; otherwise
// {pttl}, the PTTL of the lock in milliseconds.
func RWWriteAcquire() *redis.Script { return lua.RWWriteAcquire() }

// RWReadUnlock returns the script that releases one read hold of a
// read/write lock.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  its channel, "redisson_rwlock:{<name>}"
//	KEYS[3]  the caller's timeout prefix
//	KEYS[4]  every reader's timeout prefix's start, "{<name>}"
//	ARGV[1]  the caller's reader field
//	ARGV[2]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//
// It replies nil when the caller holds no read hold; 0 when it still
// holds some; 1 when this was its last. When no hold remains, the lock
// is deleted and "0" is published.
func RWReadUnlock() *redis.Script { return lua.RWReadUnlock() }

// RWWriteUnlock returns the script that releases one write hold of a
// read/write lock.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  its channel, "redisson_rwlock:{<name>}"
//	ARGV[1]  lease, set again while write holds remain
//	ARGV[2]  the caller's writer field
//	ARGV[3]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//
// It replies nil when the caller holds no write hold; 0 when write holds
// remain; 1 when this was the last: the lock is deleted, or turns to
// mode "read" while the caller's read holds remain, and "1" is published.
func RWWriteUnlock() *redis.Script { return lua.RWWriteUnlock() }

// RWReadRenew returns the script that extends the lease of the caller's
// read holds of a read/write lock.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  the caller's timeout prefix
//	KEYS[3]  optional: every reader's timeout prefix's start, "{<name>}",
//	         to drop the fields of readers whose timeout keys are all
//	         gone, the caller's own among them
//	ARGV[1]  lease
//	ARGV[2]  the caller's reader field
//
// It replies 1 when renewed and 0 when the caller holds no read hold, as
// a watchdog.Renewal's script must.
func RWReadRenew() *redis.Script { return lua.RWReadRenew() }
