-- rw_force_unlock: delete a read/write lock whoever holds it.
--
-- KEYS[1]  lock hash (see rw_read_acquire.lua)
-- KEYS[2]  channel, redisson_rwlock:{<name>}
-- ARGV[1]  the mode to clear: "read" or "write" (the lock is deleted only
--          in that mode), or "" for either
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: 1 when the lock was deleted (and "1" published), else 0.
local mode = redis.call('hget', KEYS[1], 'mode')
if mode and (ARGV[1] == '' or mode == ARGV[1]) then
	redis.call('del', KEYS[1])
	redis.call(ARGV[2], KEYS[2], '1')
	return 1
end
return 0
