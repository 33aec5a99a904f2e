-- rw_prelude: helpers prepended to the read side's scripts of a
-- read/write lock (Redisson RReadWriteLock layout, rw_read_acquire.lua).
--
-- A reader's field in the lock's hash counts its read holds, and each
-- hold i has its own timeout key "<prefix>:<field>:rwlock_timeout:<i>"
-- with the hold's lease, prefix being "{<name>}". A reader whose timeout
-- keys are all gone holds nothing: it stopped (a crash) without
-- unlocking, and its leases ran out. Its field would stay as long as
-- other readers' holds keep the hash alive; these helpers drop it.

-- dead_sample is how many of the hash's fields one sweep looks at.
local dead_sample = 8

-- reader_dead reports whether reader field f, counting n holds, has no
-- timeout key left under prefix. It stops at the first key still there.
local function reader_dead(prefix, f, n)
	for i = n, 1, -1 do
		if redis.call('exists', prefix .. ':' .. f .. ':rwlock_timeout:' .. i) == 1 then
			return false
		end
	end
	return true
end

-- drop_dead removes the fields of dead readers among dead_sample fields
-- of the hash drawn at random (HRANDFIELD; every field of a hash that
-- small). Its work is bounded by the fields it draws and, for each
-- reader among them, that reader's hold count (the timeout keys it
-- checks). "mode" and a writer's "<owner field>:write" are never
-- readers. A hash left with its "mode" alone holds nothing, and goes.
-- Without prefix (a caller that does not pass it), it does nothing.
local function drop_dead(key, prefix)
	if not prefix then
		return
	end
	local dropped = false
	for _, f in ipairs(redis.call('hrandfield', key, dead_sample)) do
		if f ~= 'mode' and string.sub(f, -6) ~= ':write' then
			local n = tonumber(redis.call('hget', key, f))
			if n and reader_dead(prefix, f, n) then
				redis.call('hdel', key, f)
				dropped = true
			end
		end
	end
	if dropped and redis.call('hlen', key) == 1 then
		redis.call('del', key)
	end
end
