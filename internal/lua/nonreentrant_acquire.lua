-- nonreentrant_acquire: take a non-reentrant lock (Redisson
-- RedissonNonReentrantLock), whose record is the reentrant lock's hash
-- with a hold count that stays 1. It keeps relock's registry of waiters
-- as acquire.lua does (waiters_prelude.lua), so that the reentrant lock's
-- releases and its own (unlock.lua) hand it on alike.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  waiter registry, relock_lock_waiters:{<name>} (waiters_prelude.lua)
-- KEYS[3]  optional: relock's record of given-up attempts (acquire.lua)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  "0": register nothing (a single try, or a waiter not yet
--          listening on its client's channel); "1": a listening waiter,
--          which registers when the lock is taken and leaves the registry
--          when it acquires; "2": as "1" for an owner that holds nothing
--          on its client: its field in the hash is a grant (hand_on) to
--          one of its calls, which it takes as it is, the lease reset
-- ARGV[4]  optional, with KEYS[3]: the attempt's number (acquire.lua)
--
-- Reply: 1 when the caller now holds the lock (hold count 1, TTL set to
-- the lease). The error NON_REENTRANT_REACQUIRE, Redisson's, when the
-- caller's field is in the hash and is not a grant to take: the owner
-- holds the lock already, and nothing changes. Otherwise {pttl, foreign}:
-- the hash's PTTL in milliseconds, which bounds how long a waiter may
-- sleep before the lock can expire on its own, and 1 when the holder is
-- not a relock client. 0 when the attempt is late (acquire.lua): nothing
-- changes.
if late(KEYS[3], ARGV[2], ARGV[4]) then
	return 0
end
local ttl = redis.call('pttl', KEYS[1])
local mine = ttl ~= -2 and redis.call('hexists', KEYS[1], ARGV[2]) == 1
if mine and ARGV[3] ~= '2' then
	return redis.error_reply('NON_REENTRANT_REACQUIRE')
end
if ttl == -2 or mine then
	if not mine then
		redis.call('hincrby', KEYS[1], ARGV[2], 1)
	end
	redis.call('pexpire', KEYS[1], ARGV[1])
	if ARGV[3] ~= '0' then
		redis.call('zrem', KEYS[2], ARGV[2])
	end
	return 1
end
if ARGV[3] == '0' then
	return {ttl, 0}
end
return {ttl, registered(KEYS[1], KEYS[2], ARGV[2], ttl)}
