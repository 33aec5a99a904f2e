package scripts

import (
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
)

// FairAcquire returns the script that takes, re-enters or queues for a
// fair lock (Redisson RFairLock).
//
//	KEYS[1]  the lock's name, a hash of owner field = hold count
//	KEYS[2]  its queue of waiters, "redisson_lock_queue:{<name>}"
//	KEYS[3]  its waiters' deadlines, "redisson_lock_timeout:{<name>}"
//	KEYS[4]  its channel prefix, "redisson_lock__channel:{<name>}"
//	ARGV[1]  lease
//	ARGV[2]  owner field
//	ARGV[3]  wait timeout in milliseconds: how long a queued waiter may
//	         go without trying again before it is dropped from the queue
//	ARGV[4]  "0": take the lock only if it is free and nobody is queued,
//	         leaving nothing behind (a try); "1": take, re-enter or queue
//	ARGV[5]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//	ARGV[6]  optional: "1" refuses an owner that holds the lock already
//	         (Redisson RedissonNonReentrantFairLock)
//
// It replies 1 when the caller now holds the lock, and the error
// NON_REENTRANT_REACQUIRE (Redisson's) when ARGV[6] refuses it.
// Otherwise {turn, ms, foreign}: turn 0, the lock is held and ms is its
// PTTL (-1: no expiry); turn 1, the lock is free but an earlier waiter
// goes first and ms is the time until that waiter may be dropped.
// foreign is 1 when the caller queued behind a client that is not
// relock's. A queued waiter listens on "<channel prefix>:<owner field>",
// where it is told its turn, and tries again then or when ms has passed.
// Renew extends a fair lock's lease. Every fair script that writes the
// queue and the deadlines leaves both a TTL of one second past the
// latest deadline, so that they go once every waiter is gone: a waiter
// that runs its own scripts tries again before its deadline, which
// keeps its place.
func FairAcquire() *redis.Script { return lua.FairAcquire() }

// FairUnlock returns the script that releases one hold of a fair lock
// and, at the last hold, hands it to the head of its queue.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  its queue of waiters, "redisson_lock_queue:{<name>}"
//	KEYS[3]  its waiters' deadlines, "redisson_lock_timeout:{<name>}"
//	KEYS[4]  its channel prefix, "redisson_lock__channel:{<name>}"
//	ARGV[1]  lease, set again while holds remain, and the lease of a
//	         hold handed to a relock waiter
//	ARGV[2]  owner field
//	ARGV[3]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//	ARGV[4]  "0"; "1" when the caller has one hold only, which then goes
//	         without its count being read
//
// It replies nil when the caller holds no hold; 0 when holds remain; 1
// when this was the last, and the lock went to the head of the queue or,
// with nobody queued, was deleted.
func FairUnlock() *redis.Script { return lua.FairUnlock() }

// FairGiveUp returns the script a fair lock's waiter runs to leave the
// queue when it stops waiting.
//
//	KEYS[1]  the lock's name
//	KEYS[2]  its queue of waiters, "redisson_lock_queue:{<name>}"
//	KEYS[3]  its waiters' deadlines, "redisson_lock_timeout:{<name>}"
//	KEYS[4]  its channel prefix, "redisson_lock__channel:{<name>}"
//	ARGV[1]  owner field
//	ARGV[2]  wait timeout in milliseconds, FairAcquire's ARGV[3]
//	ARGV[3]  "PUBLISH", or "SPUBLISH" for sharded pub/sub
//	ARGV[4]  lease of a hold handed to the next waiter
//	ARGV[5]  "0" (relock's clients pass "1" for an owner that holds the
//	         lock through another call)
//
// The waiters behind the caller move up; if the caller was at the head of
// a free lock, the lock goes to the next one. It replies 1 when the
// caller was queued (or handed the lock), 0 when not.
func FairGiveUp() *redis.Script { return lua.FairGiveUp() }
