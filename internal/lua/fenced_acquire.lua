-- fenced_acquire: acquire with a fencing token (Redisson RFencedLock layout).
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  waiter registry, as in acquire.lua
-- KEYS[3]  token counter, redisson_lock_token:{<name>} (no TTL, never deleted)
-- KEYS[4]  optional: relock's record of given-up attempts, as acquire.lua's
--          KEYS[3]
-- ARGV     as in acquire.lua, but a fenced waiter is never granted the
--          lock (a grant would draw no token): it registers as
--          "f:<owner field>" and is woken to try
--
-- Reply: {1, token} when the caller now holds the lock; every successful
-- acquire, re-entry included, increments the counter and returns the new
-- value. {0, pttl, foreign} when another owner holds it, as in
-- acquire.lua. 0 when the attempt is late, as in acquire.lua.
if late(KEYS[4], ARGV[2], ARGV[4]) then
	return 0
end
local ttl = redis.call('pttl', KEYS[1])
if ttl == -2 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	if ARGV[3] ~= '0' then
		redis.call('zrem', KEYS[2], member(ARGV[2], '1'))
	end
	return {1, redis.call('incr', KEYS[3])}
end
if ARGV[3] == '0' then
	return {0, ttl, 0}
end
return {0, ttl, registered(KEYS[1], KEYS[2], member(ARGV[2], '1'), ttl)}
