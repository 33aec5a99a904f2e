-- unlock: release one hold of a reentrant lock.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  release channel, redisson_lock__channel:{<name>}
-- ARGV[1]  lease in milliseconds, applied again while holds remain
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: nil when the caller holds no hold (nothing changes); 0 when holds
-- remain (TTL reset to the lease); 1 when this was the last hold: the hash
-- is deleted and "0" is published so that one waiter per client retries.
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], '0')
return 1
