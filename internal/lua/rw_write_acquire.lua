-- rw_write_acquire: take or re-enter the write side of a read/write lock.
--
-- KEYS[1]  lock hash (see rw_read_acquire.lua)
-- KEYS[2]  optional: relock's record of given-up attempts (acquire.lua)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the caller's writer field, "<client id>:<owner>:write"
-- ARGV[3]  the caller's reader field, "<client id>:<owner>"
-- ARGV[4]  optional, with KEYS[2]: the attempt's number (acquire.lua)
--
-- Reply: 1 when the caller now holds one more write hold (a re-entry
-- extends the TTL by the lease, as Redisson does); -3 when the caller
-- holds read holds, an upgrade that could never succeed; otherwise
-- {pttl}, the hash's PTTL in milliseconds. 0 when the attempt is late
-- (acquire.lua): nothing changes.
if late(KEYS[2], ARGV[2], ARGV[4]) then
	return 0
end
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
	redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 1
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], redis.call('pttl', KEYS[1]) + tonumber(ARGV[1]))
	return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
	return -3
end
return {redis.call('pttl', KEYS[1])}
