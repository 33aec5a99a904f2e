-- waiters_prelude: relock's registry of a reentrant lock's waiters,
-- prepended to the reentrant lock's scripts after relock_prelude.lua.
--
-- Redisson's waiters on a reentrant lock listen on the lock's channel,
-- where a release's "0" wakes one waiter in every client. relock's
-- waiters also register in a ZSET, relock_lock_waiters:{<name>}: member
-- = owner field, score = when the waiter first found the lock taken
-- (server ms). A release wakes the longest-registered one alone, on its
-- client's channel "<lock channel>:<client id>" with the message
-- "<owner>:0", so a release costs one attempt, not one per client. A
-- waiter leaves the registry when it acquires or gives up.

-- wake_next wakes the longest-registered waiter. A waiter whose client
-- does not listen any more (the process died) is dropped, and the next
-- one woken.
local function wake_next(registry, channel, publish)
	while true do
		local next = redis.call('zrange', registry, 0, 0)[1]
		if not next then
			return
		end
		if redis.call(publish, channel .. ':' .. string.sub(next, 1, 36), string.sub(next, 38) .. ':0') > 0 then
			return
		end
		redis.call('zrem', registry, next)
	end
end

-- registered registers field as a waiter on lock, whose PTTL is ttl, and
-- reports whether the lock's holder is a relock client: a Redisson
-- holder's release wakes only the waiters on the lock's channel. The
-- registry outlives the lock's lease by a grace period, so a waiter's
-- entry lasts until it retries when the lease may have run out.
local function registered(lock, registry, field, ttl)
	local t = redis.call('time')
	redis.call('zadd', registry, 'NX', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), field)
	if ttl < 0 then
		redis.call('persist', registry)
	elseif redis.call('pttl', registry) < ttl + 5000 then
		redis.call('pexpire', registry, ttl + 5000)
	end
	for _, f in ipairs(redis.call('hkeys', lock)) do
		if not is_relock(f) then
			return 1
		end
	end
	return 0
end
