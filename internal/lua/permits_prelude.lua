-- permits_prelude: helpers prepended to every expirable-permits script
-- (Redisson's RPermitExpirableSemaphore), after semaphore_prelude.lua.
--
-- Every permits script receives the same KEYS: KEYS[1] to KEYS[5] as in
-- semaphore_prelude.lua (the count, the channel redisson_sc:{<name>},
-- where each message is a count of permits that became available, and
-- relock's registry of waiters), and
-- KEYS[6]  permits ZSET, {<name>}:timeout: member = permit id (its 16 raw
--          bytes), score = epoch ms at which the permit expires
--          (permits_no_expiry for a permit without a lease)
-- KEYS[7]  relock's record of given-up permit ids, a ZSET,
--          relock_permits_gone:{<name>}: member = the id of a permit
--          whose acquire relock undid (its 16 raw bytes), score = epoch
--          ms until which the record must last (permits_undo.lua); only
--          permits_acquire.lua, which takes it as optional, and
--          permits_undo.lua use it, and Redisson never reads it
-- and ARGV[1], the publish command: PUBLISH, or SPUBLISH for sharded
-- pub/sub.
--
-- "now" is the Redis server's clock (TIME): relock clients with skewed
-- clocks cannot reclaim each other's permits early. Redisson's scripts
-- read their own client's clock instead.

-- permits_no_expiry is the score Redisson gives a permit without a lease.
local permits_no_expiry = 922337203685477

-- now_ms is the server's time in milliseconds.
local function now_ms()
	return math.floor(now_us() / 1000)
end

-- count_up adds n to the count and returns the new count, a decimal
-- string: INCRBY's reply reaches Lua as a number, a double, which past
-- 2^53 (relock.MaxCount) is rounded and past 10^17 is written in
-- exponent form, so what is published or returned is the key's string,
-- which Redis adds up exactly.
local function count_up(n)
	redis.call('incrby', KEYS[1], n)
	return redis.call('get', KEYS[1])
end

-- reclaim returns the permits whose expiry has come to the count and,
-- when that leaves any available, publishes the count and returns it, for
-- the caller to serve the waiters; nil otherwise. (tonumber may round a
-- count past 2^53, never across zero.)
local function reclaim()
	local expired = redis.call('zremrangebyscore', KEYS[6], 0, now_ms())
	if expired > 0 then
		local value = count_up(expired)
		if tonumber(value) > 0 then
			announce(value)
			return value
		end
	end
	return nil
end

-- release gives back the permit with id (its 16 raw bytes), after
-- reclaiming the expired ones, so that a permit whose expiry has come
-- counts as released already. It returns 1 when the permit was held: it
-- is removed, the count incremented, the new count published and
-- relock's waiters it can satisfy woken (semaphore_prelude.lua); 0 when
-- it was not (released before, expired, or never taken), and nothing
-- else changes.
local function release(id)
	local available = reclaim()
	local released = redis.call('zrem', KEYS[6], id)
	if released == 1 then
		available = count_up(1)
		announce(available)
	end
	serve_all(available)
	return released
end
