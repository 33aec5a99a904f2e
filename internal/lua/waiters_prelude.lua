-- waiters_prelude: relock's registry of a reentrant lock's waiters,
-- prepended to the reentrant lock's scripts after relock_prelude.lua.
--
-- Redisson's waiters on a reentrant lock listen on the lock's channel,
-- where a release's "0" wakes one waiter in every client. relock's
-- waiters also register in a ZSET, relock_lock_waiters:{<name>}: member
-- = owner field ("f:<owner field>" for a waiter that wants a fencing
-- token), score = when the waiter first found the lock taken (server
-- microseconds, exact in a double). A release tells the
-- longest-registered one alone, on its client's
-- channel "<lock channel>:<client id>": when nobody listens on the lock's
-- channel (no Redisson waiter can be passed over) it grants the lock to
-- that waiter, "<owner>:<lease ms>", as the fair lock does; otherwise,
-- or for a waiter that wants a token, it wakes it to try, "<owner>:0".
-- A waiter leaves the registry when it acquires, is granted the lock or
-- gives up.

-- member is a waiter's registry member.
local function member(field, fenced)
	if fenced == '1' then
		return 'f:' .. field
	end
	return field
end

-- hand_on follows a release that left lock free: "0" on channel for the
-- waiters listening there, then the longest-registered relock waiter is
-- granted the lock, with a lease of lease ms, or woken (see above). A
-- waiter whose client does not listen any more (the process died) is
-- dropped, and the next one considered.
local function hand_on(lock, registry, channel, publish, lease)
	local others = redis.call(publish, channel, '0')
	while true do
		local next = redis.call('zrange', registry, 0, 0)[1]
		if not next then
			return
		end
		local field, grant = next, others == 0
		if string.sub(next, 1, 2) == 'f:' then
			field, grant = string.sub(next, 3), false
		end
		local note = '0'
		if grant then
			note = lease
		end
		if redis.call(publish, channel .. ':' .. string.sub(field, 1, 36), string.sub(field, 38) .. ':' .. note) > 0 then
			if grant then
				redis.call('zrem', registry, next)
				redis.call('hset', lock, field, 1)
				redis.call('pexpire', lock, lease)
			end
			return
		end
		redis.call('zrem', registry, next)
	end
end

-- registered registers a waiter (member m) on lock, whose PTTL is ttl,
-- and reports whether the lock's holder is a relock client: a Redisson
-- holder's release is heard only on the lock's channel. The registry
-- outlives the lock's lease by a grace period of 5 s, so an entry lasts
-- until its waiter retries when the lease may have run out. (A new
-- waiter sets it from the lock's TTL now, which no earlier waiter saw
-- later unless the lock was taken since with a shorter fixed lease.) A
-- lock with no TTL (written so by another program) gives the registry
-- no lease to follow: it then lives the grace period past its latest
-- registration, and its waiters retry within it (hashlock.NoTTLSleep),
-- so that it never outlives them nor, once they stop, the lock.
local function registered(lock, registry, m, ttl)
	local t = redis.call('time')
	local added = redis.call('zadd', registry, 'NX', tonumber(t[1]) * 1000000 + tonumber(t[2]), m)
	local last = math.max(ttl, 0) + 5000
	if added == 1 or redis.call('pttl', registry) < last then
		redis.call('pexpire', registry, last)
	end
	for _, f in ipairs(redis.call('hkeys', lock)) do
		if not is_relock(f) then
			return 1
		end
	end
	return 0
end
