-- rw_read_acquire: take or re-enter the read side of a read/write lock
-- (Redisson RReadWriteLock layout).
--
-- KEYS[1]  lock hash, the user's lock name: field "mode" = read|write,
--          readers' "<client id>:<owner>" = hold count, the writer's
--          "<client id>:<owner>:write" = hold count
-- KEYS[2]  the caller's timeout key prefix,
--          {<name>}:<client id>:<owner>:rwlock_timeout; read hold i has the
--          string key "<prefix>:<i>" = 1 with its own lease
-- KEYS[3]  optional: relock's record of given-up attempts (acquire.lua)
-- KEYS[4]  optional, with KEYS[3]: every reader's timeout key prefix,
--          "{<name>}": the fields of dead readers are dropped first
--          (rw_prelude.lua's drop_dead)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the caller's reader field
-- ARGV[3]  the caller's writer field: a writer may take read holds
--          (downgrade)
-- ARGV[4]  optional, with KEYS[3]: the attempt's number (acquire.lua)
--
-- Reply: 1 when the caller now holds one more read hold; otherwise
-- {pttl}, the hash's PTTL in milliseconds (a writer holds the lock). 0
-- when the attempt is late (acquire.lua): nothing changes.
if late(KEYS[3], ARGV[2], ARGV[4]) then
	return 0
end
drop_dead(KEYS[1], KEYS[4])
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode then
	redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
	redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 1
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
	local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('set', KEYS[2] .. ':' .. n, 1, 'px', ARGV[1])
	redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
	return 1
end
return {redis.call('pttl', KEYS[1])}
