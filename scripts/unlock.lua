-- unlock: release one hold of a reentrant lock.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  release channel, redisson_lock__channel:{<name>}
-- KEYS[3]  waiter registry, relock_lock_waiters:{<name>}
-- ARGV[1]  lease in milliseconds, applied again while holds remain
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: nil when the caller holds no hold (nothing changes); 0 when holds
-- remain (TTL reset to the lease); 1 when this was the last hold: the hash
-- is deleted, "0" is published on the lock's channel for Redisson's
-- waiters, and the longest-registered relock waiter is woken.
local count = redis.call('hget', KEYS[1], ARGV[2])
if not count then
	return nil
end
if tonumber(count) > 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], -1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], '0')
wake_next(KEYS[3], KEYS[2], ARGV[3])
return 1
