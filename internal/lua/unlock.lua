-- unlock: release one hold of a reentrant lock.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  release channel, redisson_lock__channel:{<name>}
-- KEYS[3]  waiter registry, relock_lock_waiters:{<name>}
-- ARGV[1]  lease in milliseconds, applied again while holds remain, and
--          the lease of a hold granted to the next waiter
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[4]  "1" when the caller knows of one hold only: the field goes
--          without its count being read; "0" otherwise
--
-- Reply: nil when the caller holds no hold (nothing changes); 0 when holds
-- remain (TTL reset to the lease); 1 when this was the last hold: the hash
-- is deleted, "0" is published on the lock's channel for Redisson's
-- waiters, and the longest-registered relock waiter is granted the lock
-- or woken (hand_on).
if ARGV[4] == '1' then
	-- The hash has no other field: removing the last one deletes it.
	if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
		return nil
	end
else
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
end
hand_on(KEYS[1], KEYS[3], KEYS[2], ARGV[3], ARGV[1])
return 1
