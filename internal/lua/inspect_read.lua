-- inspect_read: read the whole state of one lock at once, writing
-- nothing, for operators (package inspect). Every key shares the lock
-- key's hash slot, so the script runs on one node of a cluster.
--
-- KEYS[1]  the lock key, the user's lock name: a hash for a reentrant,
--          fair or read/write lock
-- KEYS[2]  fair queue LIST, redisson_lock_queue:{<name>}
-- KEYS[3]  fair deadline ZSET, redisson_lock_timeout:{<name>}
-- KEYS[4]  relock's waiter registry ZSET, relock_lock_waiters:{<name>}
-- KEYS[5]  fencing counter, redisson_lock_token:{<name>}
-- KEYS[6]  read-hold key prefix, "{<name>}:" ("<name>:" when the name
--          has a hash tag): reader field f's read hold i has the string
--          key "<prefix><f>:rwlock_timeout:<i>"
-- ARGV[1]  the most read holds of one reader whose keys are read
--
-- Reply: {type, pttl, fields, leases, queue, deadlines, waiters, token,
-- time, queue pttl, deadlines pttl}: the TYPE and PTTL of KEYS[1]; its HGETALL when it is a hash,
-- else {}; for a hash with a "mode" field (a read/write lock), a flat
-- list of reader field and the PTTLs of its read holds' keys (holds 1 to
-- min(count, ARGV[1])), else {}; LRANGE of KEYS[2]; ZRANGE WITHSCORES of
-- KEYS[3] and of KEYS[4]; GET of KEYS[5] (nil when absent); TIME; the
-- PTTLs of KEYS[2] and KEYS[3].
local kind = redis.call('type', KEYS[1])['ok']
local fields, leases = {}, {}
if kind == 'hash' then
	fields = redis.call('hgetall', KEYS[1])
	if redis.call('hexists', KEYS[1], 'mode') == 1 then
		local most = tonumber(ARGV[1])
		for i = 1, #fields, 2 do
			local f, n = fields[i], tonumber(fields[i + 1])
			if f ~= 'mode' and string.sub(f, -6) ~= ':write' and n then
				local ttls = {}
				for h = 1, math.min(n, most) do
					ttls[h] = redis.call('pttl', KEYS[6] .. f .. ':rwlock_timeout:' .. h)
				end
				leases[#leases + 1] = f
				leases[#leases + 1] = ttls
			end
		end
	end
end
local token = false
if redis.call('type', KEYS[5])['ok'] == 'string' then
	token = redis.call('get', KEYS[5])
end
return {
	kind,
	redis.call('pttl', KEYS[1]),
	fields,
	leases,
	redis.call('lrange', KEYS[2], 0, -1),
	redis.call('zrange', KEYS[3], 0, -1, 'withscores'),
	redis.call('zrange', KEYS[4], 0, -1, 'withscores'),
	token,
	redis.call('time'),
	redis.call('pttl', KEYS[2]),
	redis.call('pttl', KEYS[3]),
}
