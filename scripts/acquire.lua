-- acquire: take or re-enter a reentrant lock (Redisson RLock layout).
--
-- KEYS[1]  lock hash, the user's lock name
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
--
-- Reply: nil when the caller now holds the lock (hold count + 1, TTL reset
-- to the lease); otherwise the hash's PTTL in milliseconds, which bounds how
-- long a waiter may sleep before the lock can expire on its own.
if redis.call('exists', KEYS[1]) == 0
	or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])
