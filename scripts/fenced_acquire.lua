-- fenced_acquire: acquire with a fencing token (Redisson RFencedLock layout).
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  token counter, redisson_lock_token:{<name>} (no TTL, never deleted)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
--
-- Reply: {1, token} when the caller now holds the lock; every successful
-- acquire, re-entry included, increments the counter and returns the new
-- value. {0, pttl} when another owner holds it, pttl as in acquire.lua.
if redis.call('exists', KEYS[1]) == 0
	or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return {1, redis.call('incr', KEYS[2])}
end
return {0, redis.call('pttl', KEYS[1])}
