// Package scripts holds the Lua scripts that take, release and renew a
// Redisson lock from a program of your own, without a relock Client: a
// Redisson RLock, RFairLock and RReadWriteLock. A lock taken so is the
// same record in Redis as one a relock or Redisson client takes, and
// excludes them alike; package watchdog can renew its lease.
//
// Each function returns its script as a *redis.Script, so calls (Run) go
// out as EVALSHA and fall back to EVAL when the server answers NOSCRIPT.
// Its doc names the script's KEYS, ARGV and replies. Key and channel
// names are Redisson's: "{<name>}" in them is the lock's name in braces,
// so that they hash to the name's cluster slot, or the name as it is
// when it has a hash tag of its own. A lease is in milliseconds. An
// owner field is "<client id>:<owner>", Redisson's "<UUID>:<thread id>".
//
// relock tells its own clients from Redisson's by the client id: relock's
// are version-8 UUIDs, Redisson's version 4. Use a version-4 UUID, as
// Redisson does: relock clients then treat your holds as a Redisson
// client's, and wake your waiters as Redisson's, on the channels each
// function names. The scripts take some further KEYS and ARGV that only
// relock's clients pass (a record of given-up attempts, grant modes); the
// docs here give the arguments a program of its own passes, and leave
// those out.
//
// Replies are relock's own; Redisson never reads them. An acquire that
// takes the lock replies 1 rather than nil: go-redis turns a nil reply
// into the error redis.Nil.
package scripts
