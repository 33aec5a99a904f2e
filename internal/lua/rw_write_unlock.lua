-- rw_write_unlock: release one write hold of a read/write lock.
--
-- KEYS[1]  lock hash (see rw_read_acquire.lua)
-- KEYS[2]  channel, redisson_rwlock:{<name>}
-- ARGV[1]  lease in milliseconds, applied again while write holds remain
-- ARGV[2]  the caller's writer field
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- At the last write hold the writer field goes; the hash is deleted if
-- nothing else remains, or turns to mode "read" when the caller's own
-- read holds (a downgrade) remain. Either way "1" is published: every
-- waiter may now get in, readers all at once.
--
-- Reply: nil when the caller holds no write hold; 0 when write holds
-- remain; 1 when this was the last.
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('hdel', KEYS[1], ARGV[2])
if redis.call('hlen', KEYS[1]) == 1 then
	redis.call('del', KEYS[1])
else
	redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call(ARGV[3], KEYS[2], '1')
return 1
