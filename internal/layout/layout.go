// Package layout names every Redis key and pub/sub channel that relock
// derives from the name of a lock, semaphore, latch, election or fenced
// resource, or from a client's id: Redisson's, which relock shares so
// that its clients and Redisson's exclude and wake each other, and
// relock's own, which Redisson ignores. It is the one place relock's Go
// code spells these names (tests and examples spell some again, to
// check them from outside). The scripts (package lua) get them as KEYS,
// and append to them only what this package's names append too: a
// client id or an owner field to a channel (LockClientChannel,
// FairWaiterChannel, SemaphoreClientChannel), a read hold's
// ":<field>:rwlock_timeout:<i>" to its lock's prefix
// (ReadTimeoutsPrefix). docs/wire-layout.md describes them, and
// docs/state.md gives each its row: how long it lives and what bounds it
// (state_test.go checks that every name here has one). Each function
// says which Redisson class it mirrors, or that the name is relock's
// own.
//
// The hash-tag rule, Redisson's prefixName and suffixName: a derived name
// wraps the name in braces, "p:{<name>}" or "{<name>}:s", so that it
// hashes to the name's cluster slot; a name that carries a hash tag of
// its own (any '{', which core.ValidateName checks opens a non-empty
// tag) is used as it is, "p:<name>" or "<name>:s", and not wrapped again.
// The one exception is LatchChannel, which Redisson always wraps.
package layout

import "strings"

// prefix is Redisson's prefixName: "p:{name}", or "p:name" when name
// carries its own hash tag.
func prefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

// under is prefix(p, name) + ":" + sub, built at once.
func under(p, name, sub string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name + ":" + sub
	}
	return p + ":{" + name + "}:" + sub
}

// suffix is Redisson's suffixName: "{name}:s", or "name:s" when name
// carries its own hash tag.
func suffix(name, s string) string {
	if strings.Contains(name, "{") {
		return name + ":" + s
	}
	return "{" + name + "}:" + s
}

// LockChannel is the channel of the lock named name,
// "redisson_lock__channel:{<name>}": RedissonLock's (and RedissonFairLock's,
// RedissonFencedLock's, relock's non-reentrant lock's). A release that
// leaves the lock free publishes "0" there, which wakes one waiter on
// each Redisson client.
func LockChannel(name string) string { return prefix("redisson_lock__channel", name) }

// GroupLockChannel is the channel of the group lock on group,
// "redisson_lock__channel:{<group>}": RedissonFasterMultiLock's
// getChannelName, spelled as RedissonLock's for a lock named group.
// Redisson's release publishes "0" there; relock's publishes "1", which
// wakes every waiter on the group (package grouplock).
func GroupLockChannel(group string) string { return prefix("redisson_lock__channel", group) }

// LockClientChannel is relock's own channel for the waiters of client
// clientID on the lock named name (reentrant, non-reentrant and fair),
// "redisson_lock__channel:{<name>}:<client id>": the lock's channel and
// the client's id, where a release hands the lock to one of them or
// wakes it ("<owner>:<note>").
func LockClientChannel(name, clientID string) string {
	return under("redisson_lock__channel", name, clientID)
}

// FairWaiterChannel is the channel of one waiter, owner field field
// ("<client id>:<owner>"), of the fair lock named name,
// "redisson_lock__channel:{<name>}:<field>": RedissonFairLock's (and
// RedissonNonReentrantFairLock's, which inherits it), where a release
// wakes a Redisson waiter at the queue's head with "0".
func FairWaiterChannel(name, field string) string {
	return under("redisson_lock__channel", name, field)
}

// LockWaiters is relock's own registry of the waiters on the lock named
// name (a sorted set of owner fields), "relock_lock_waiters:{<name>}".
func LockWaiters(name string) string { return prefix("relock_lock_waiters", name) }

// LockGone is relock's record of the acquire attempts its clients gave
// up on name, "relock_lock_gone:{<name>}": a hash from owner field to the
// highest attempt number given up (internal/core/late.go). Redisson never
// reads it.
func LockGone(name string) string { return prefix("relock_lock_gone", name) }

// LockGoneDue is relock's index of when the entries of LockGone(name) may
// go, "relock_lock_gone_due:{<name>}": a ZSET of owner fields scored with
// the epoch ms until which each field's entry lasts
// (internal/lua/bury.lua). Redisson never reads it.
func LockGoneDue(name string) string { return prefix("relock_lock_gone_due", name) }

// PermitsGone is relock's record of the permit ids whose acquires its
// clients undid on the expirable permits named name,
// "relock_permits_gone:{<name>}": a ZSET of ids scored with the epoch ms
// until which each record lasts (internal/lua/permits_undo.lua). Redisson
// never reads it.
func PermitsGone(name string) string { return prefix("relock_permits_gone", name) }

// FenceLast is where package fence's Redis guard keeps the last token
// it let write to resource, "relock_fence:{<resource>}": relock's own.
func FenceLast(resource string) string { return prefix("relock_fence", resource) }

// LockToken is the fencing counter of the lock named name,
// "redisson_lock_token:{<name>}": RedissonFencedLock's.
func LockToken(name string) string { return prefix("redisson_lock_token", name) }

// FairQueue is the queue of waiters (a list of owner fields) of the fair
// lock named name, "redisson_lock_queue:{<name>}": RedissonFairLock's
// threadsQueueName, which RedissonNonReentrantFairLock inherits.
func FairQueue(name string) string { return prefix("redisson_lock_queue", name) }

// FairTimeouts is the waiters' deadlines (a sorted set of owner fields)
// of the fair lock named name, "redisson_lock_timeout:{<name>}":
// RedissonFairLock's timeoutSetName, which RedissonNonReentrantFairLock
// inherits.
func FairTimeouts(name string) string { return prefix("redisson_lock_timeout", name) }

// RWLockChannel is the channel of the read/write lock named name,
// "redisson_rwlock:{<name>}": RedissonReadWriteLock's (its RedissonReadLock
// and RedissonWriteLock publish there).
func RWLockChannel(name string) string { return prefix("redisson_rwlock", name) }

// ReadTimeoutsPrefix is what the key of every read hold of the
// read/write lock named name starts with: "{<name>}", or the name itself
// when it carries its own hash tag. Reader field f's read hold i has the
// key ReadTimeoutPrefix(name, f) + ":" + i, that is
// "{<name>}:<f>:rwlock_timeout:<i>" (RedissonReadLock's). The scripts
// that walk every reader's holds get this prefix, as RedissonReadLock's
// unlock script gets its keyPrefix.
func ReadTimeoutsPrefix(name string) string {
	if strings.Contains(name, "{") {
		return name
	}
	return "{" + name + "}"
}

// ReadTimeoutPrefix is what the keys of reader field field's read holds
// of the read/write lock named name start with,
// "{<name>}:<field>:rwlock_timeout": RedissonReadLock's
// getReadWriteTimeoutNamePrefix. Read hold i's key adds ":<i>".
func ReadTimeoutPrefix(name, field string) string {
	if strings.Contains(name, "{") {
		return name + ":" + field + ":rwlock_timeout"
	}
	return "{" + name + "}:" + field + ":rwlock_timeout"
}

// SemaphoreChannel is the shared channel of the semaphore named name,
// "redisson_sc:{<name>}": RedissonSemaphore's and
// RedissonPermitExpirableSemaphore's, where a release publishes the
// permits now available.
func SemaphoreChannel(name string) string { return prefix("redisson_sc", name) }

// SemaphoreWaiters is relock's own registry of the waiters on the
// semaphore named name (package semaphore's and package permits'),
// "relock_semaphore_waiters:{<name>}".
func SemaphoreWaiters(name string) string { return prefix("relock_semaphore_waiters", name) }

// SemaphoreWatcher is relock's own record of which waiter on the
// semaphore named name watches its shared channel,
// "relock_semaphore_watcher:{<name>}".
func SemaphoreWatcher(name string) string { return prefix("relock_semaphore_watcher", name) }

// SemaphoreGrants is relock's own record of the permits of the semaphore
// named name handed to waiters and not yet acknowledged (package
// semaphore's), "relock_semaphore_grants:{<name>}".
func SemaphoreGrants(name string) string { return prefix("relock_semaphore_grants", name) }

// SemaphoreAttempts is relock's own record of the semaphore named name's
// acquires whose replies may be lost, and of those given up,
// "relock_semaphore_attempts:{<name>}".
func SemaphoreAttempts(name string) string { return prefix("relock_semaphore_attempts", name) }

// SemaphoreClientChannels is what relock's own channels for the waiters
// of the semaphore named name start with, "relock_sc:{<name>}": the
// scripts add ":<client id>" (SemaphoreClientChannel).
func SemaphoreClientChannels(name string) string { return prefix("relock_sc", name) }

// SemaphoreClientChannel is relock's own channel for the waiters of
// client clientID on the semaphore named name,
// "relock_sc:{<name>}:<client id>", shared by package semaphore's and
// package permits' waiters.
func SemaphoreClientChannel(name, clientID string) string {
	return under("relock_sc", name, clientID)
}

// PermitTimeouts is the permits (a sorted set of permit ids scored by
// their expiry) of the expirable semaphore named name,
// "{<name>}:timeout": RedissonPermitExpirableSemaphore's timeoutName.
func PermitTimeouts(name string) string { return suffix(name, "timeout") }

// LatchChannel is the channel of the count-down latch named name,
// "redisson_countdownlatch__channel__{<name>}": RedissonCountDownLatch's.
// Unlike every other name here, Redisson wraps the whole name in braces
// even when it carries a hash tag of its own: the channel then hashes to
// the count's slot only by chance.
func LatchChannel(name string) string {
	return "redisson_countdownlatch__channel__{" + name + "}"
}

// ElectionLock is relock's own name of the fair lock that serializes the
// candidates of the election named name, "relock_election:{<name>}".
// The fair lock's keys and channels derive from it in turn.
func ElectionLock(name string) string { return prefix("relock_election", name) }

// ElectionLeader is relock's own record of the leader of the election
// named name, "relock_election_leader:{<name>}".
func ElectionLeader(name string) string { return prefix("relock_election_leader", name) }

// ElectionTerm is relock's own term counter of the election named name,
// "relock_election_term:{<name>}".
func ElectionTerm(name string) string { return prefix("relock_election_term", name) }

// ElectionChannel is relock's own channel on which the election named
// name announces changes of leader, "relock_election_channel:{<name>}".
func ElectionChannel(name string) string { return prefix("relock_election_channel", name) }

// ElectionLog is relock's own change log (a stream) of the election
// named name, "relock_election_log:{<name>}".
func ElectionLog(name string) string { return prefix("relock_election_log", name) }

// ClientChannel is relock's own channel on which the client clientID is
// told of force-unlocks of the locks it holds, "relock_client:{<client
// id>}": each message is a lock's name.
func ClientChannel(clientID string) string { return prefix(clientChannel, clientID) }

// ClientChannels is what every ClientChannel starts with, for a
// PSUBSCRIBE pattern or a prefix match on a channel's name.
const ClientChannels = clientChannel + ":"

const clientChannel = "relock_client"

// LockCompanion reports whether key is one that a lock derives from its
// name and that is never a lock's own record: a key with the prefix of
// FairQueue, FairTimeouts, LockWaiters, LockGone, LockGoneDue or
// LockToken, or of Redisson's unlock latches ("redisson_unlock_latch:",
// RedissonBaseLock's), or a read hold's key (ReadTimeoutPrefix).
func LockCompanion(key string) bool {
	for _, p := range []string{
		"redisson_lock_queue:", "redisson_lock_timeout:", "relock_lock_waiters:", "relock_lock_gone:",
		"relock_lock_gone_due:", "redisson_lock_token:", "redisson_unlock_latch:",
	} {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return strings.Contains(key, ":rwlock_timeout:")
}
