-- rw_force_unlock: delete a read/write lock whoever holds it.
--
-- KEYS[1]  lock hash (see rw_read_acquire.lua)
-- KEYS[2]  channel, redisson_rwlock:{<name>}
-- KEYS[3]  every owner's timeout key prefix, {<name>}: owner f's hold i is
--          "<prefix>:<f>:rwlock_timeout:<i>" (see rw_read_unlock.lua)
-- ARGV[1]  the mode to clear: "read" or "write" (the lock is deleted only
--          in that mode), or "" for either
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- The read holds' timeout keys go with the hash, rather than waiting out
-- their leases. Writer fields ("...:write") have no timeout keys. The
-- holders are listed, as in force_unlock.lua, so that the caller can
-- tell their clients.
--
-- Reply: {1, <field>...} when the lock was deleted (and "1" published),
-- the fields being its holders': readers' "<client id>:<owner>" and the
-- writer's "<client id>:<owner>:write"; else {0}. Redisson's replies 1
-- or 0; the deletion and the message are the same.
local mode = redis.call('hget', KEYS[1], 'mode')
if not mode or (ARGV[1] ~= '' and mode ~= ARGV[1]) then
	return {0}
end
local reply = {1}
for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
	local n = tonumber(redis.call('hget', KEYS[1], f))
	if n then
		reply[#reply + 1] = f
		if string.sub(f, -6) ~= ':write' then
			for i = 1, n do
				redis.call('del', KEYS[3] .. ':' .. f .. ':rwlock_timeout:' .. i)
			end
		end
	end
end
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], '1')
return reply
