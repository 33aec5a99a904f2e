-- acquire: take or re-enter a reentrant lock (Redisson RLock layout).
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  waiter registry, relock_lock_waiters:{<name>} (waiters_prelude.lua)
-- KEYS[3]  optional: relock's record of given-up attempts,
--          relock_lock_gone:{<name>} (bury.lua)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  "0": register nothing (a single try, or a waiter not yet
--          listening on its client's channel); "1": a listening waiter,
--          which registers when the lock is taken and leaves the registry
--          when it acquires; "2": as "1" for an owner that holds nothing
--          on its client: its field in the hash is a grant (hand_on) to
--          one of its calls, which it takes as it is, one hold, the lease
--          reset; "3": as "0" for such an owner, taking its field as "2"
-- ARGV[4]  optional, with KEYS[3]: the attempt's number, which a give-up
--          recorded in KEYS[3] makes late
--
-- Reply: 1 when the caller now holds the lock (hold count + 1, or with
-- "2" and "3" its hold as it was; TTL reset to the lease). Otherwise
-- {pttl, foreign}: the hash's PTTL in milliseconds, which bounds how long
-- a waiter may sleep before the lock can expire on its own, and, for a
-- listening waiter ("1" or "2"), 1 when the holder is not a relock
-- client (always 0 otherwise). 0 when the attempt is late: relock
-- gave it up already, and nothing changes.
if late(KEYS[3], ARGV[2], ARGV[4]) then
	return 0
end
local listening = ARGV[3] == '1' or ARGV[3] == '2'
local ttl = redis.call('pttl', KEYS[1])
if ttl == -2 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	if ttl == -2 or ARGV[3] == '0' or ARGV[3] == '1' then
		redis.call('hincrby', KEYS[1], ARGV[2], 1)
	end
	redis.call('pexpire', KEYS[1], ARGV[1])
	if listening then
		redis.call('zrem', KEYS[2], ARGV[2])
	end
	return 1
end
if not listening then
	return {ttl, 0}
end
return {ttl, registered(KEYS[1], KEYS[2], ARGV[2], ttl)}
