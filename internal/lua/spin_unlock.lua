-- spin_unlock: release one hold of a spin lock. Unlike unlock.lua it
-- publishes nothing and tells no waiter: spin waiters poll, and the
-- reentrant lock's waiters on the same name find the lock free at their
-- next attempt, which their lease-bound sleep brings.
--
-- KEYS[1]  lock hash, the user's lock name
-- ARGV[1]  lease in milliseconds, applied again while holds remain
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  "1" when the caller knows of one hold only: the field goes
--          without its count being read; "0" otherwise
--
-- Reply: nil when the caller holds no hold (nothing changes); 0 when holds
-- remain (TTL reset to the lease); 1 when this was the last hold and the
-- hash is deleted.
if ARGV[3] == '1' then
	-- The hash has no other field: removing the last one deletes it.
	if redis.call('hdel', KEYS[1], ARGV[2]) == 0 then
		return nil
	end
	return 1
end
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
return 1
