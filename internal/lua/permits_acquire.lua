-- permits_acquire: take one permit if one is available, in turn among
-- relock's waiters.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the new permit's id: 16 random bytes
-- ARGV[3]  its lease in milliseconds
-- ARGV[4]  the caller's registry member, "<client id>:<tag>:1"
-- ARGV[5]  "1" when the caller listens on its client's channel, and
--          registers when it does not take a permit; "0" otherwise
-- ARGV[6]  the caller's registration time, as a reply gave it ("0" for
--          none, "-1" for unknown: a reply was lost)
--
-- An id in relock's record of given-up permit ids (KEYS[7], which a
-- caller that keeps no such record may leave out) is an acquire that
-- runs after relock undid it (permits_undo.lua): its caller was told it
-- failed and is gone. It takes nothing and registers nothing.
--
-- Expired permits are reclaimed first. A permit is taken when the count
-- is at least 1 and, unless a walk woke the caller for one, when one is
-- left that the registered waiters ahead of it do not claim (see
-- semaphore_acquire.lua): the count is decremented and the id added with
-- score now + lease. When the count key has a TTL, the permits ZSET gets
-- the same one.
--
-- Reply: nil when the permit was taken; 0 when its id was given up.
-- Otherwise {ms, watcher, registration} as semaphore_acquire.lua
-- replies; the watcher's ms is also at most the time until the earliest
-- permit expires, which frees it with no message, so that its attempt
-- then returns it to the count and wakes whom it can satisfy.
if KEYS[7] and redis.call('zscore', KEYS[7], ARGV[2]) then
	return 0
end
reclaim()
local have = tonumber(redis.call('get', KEYS[1]) or '0')
-- A caller that never registered (ARGV[6] "0") is not looked up.
local score = ARGV[6] ~= '0' and redis.call('zscore', KEYS[3], ARGV[4])
score = score and tonumber(score)
local left, woken = have, false
if score and score < 0 and have >= 1 then
	woken, left = true, have - 1
end
local _, first, mine = serve(left, ARGV[4], score, 1)
if woken or mine then
	redis.call('decrby', KEYS[1], 1)
	redis.call('zadd', KEYS[6], now_ms() + tonumber(ARGV[3]), ARGV[2])
	local ttl = redis.call('pttl', KEYS[1])
	if ttl > 0 then
		redis.call('pexpire', KEYS[6], ttl)
	end
	if score then
		drop(ARGV[4])
	end
	if vacant then
		appoint()
	end
	return nil
end
local watcher = 0
if ARGV[5] == '1' then
	score, watcher = sleep(ARGV[4], score, ARGV[6])
end
if vacant then
	appoint()
end
local wait = wait_ms(have >= 1, first)
if watcher == 1 then
	local earliest = redis.call('zrange', KEYS[6], 0, 0, 'WITHSCORES')[2]
	if earliest and tonumber(earliest) < permits_no_expiry then
		wait = math.min(wait, math.max(tonumber(earliest) - now_ms(), 1))
	end
end
return {wait, watcher, score or 0}
