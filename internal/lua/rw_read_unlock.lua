-- rw_read_unlock: release one read hold of a read/write lock.
--
-- KEYS[1]  lock hash (see rw_read_acquire.lua)
-- KEYS[2]  channel, redisson_rwlock:{<name>}
-- KEYS[3]  the caller's timeout key prefix (see rw_read_acquire.lua)
-- KEYS[4]  every owner's timeout key prefix, {<name>}: owner f's hold i is
--          "<prefix>:<f>:rwlock_timeout:<i>"
-- ARGV[1]  the caller's reader field
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- The caller's top hold and its timeout key go. If other holds remain,
-- the hash lives on for the longest remaining read hold's lease (a
-- reader that died stops counting once its own holds' leases end, and
-- its field, every timeout key of it gone, is dropped on the way), or
-- as it is while a writer holds it; otherwise it is deleted and "0" is
-- published.
--
-- Reply: nil when the caller holds no read hold; 0 when the caller still
-- holds read holds; 1 when this was its last.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return nil
end
local count = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if count == 0 then
	redis.call('hdel', KEYS[1], ARGV[1])
end
redis.call('del', KEYS[3] .. ':' .. (count + 1))
local mine = 0
if count == 0 then
	mine = 1
end
if redis.call('hlen', KEYS[1]) > 1 then
	local longest = -3
	for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
		local n = tonumber(redis.call('hget', KEYS[1], f))
		if n then
			local alive = false
			for i = n, 1, -1 do
				local ttl = redis.call('pttl', KEYS[4] .. ':' .. f .. ':rwlock_timeout:' .. i)
				longest = math.max(longest, ttl)
				alive = alive or ttl ~= -2
			end
			if not alive and string.sub(f, -6) ~= ':write' then
				redis.call('hdel', KEYS[1], f)
			end
		end
	end
	if longest > 0 then
		redis.call('pexpire', KEYS[1], longest)
		return mine
	end
	if redis.call('hget', KEYS[1], 'mode') == 'write' then
		return mine
	end
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], '0')
return mine
