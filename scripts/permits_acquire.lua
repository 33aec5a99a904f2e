-- permits_acquire: take one permit if one is available.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the new permit's id: 16 random bytes
-- ARGV[3]  its lease in milliseconds
--
-- Expired permits are reclaimed first. A permit is taken when the count
-- is at least 1: the count is decremented and the id added with score
-- now + lease. When the count key has a TTL, the permits ZSET gets the
-- same one.
--
-- Reply: nil when the permit was taken. Otherwise the milliseconds until
-- the earliest permit expires (when it frees itself, with no message),
-- or -1 when no permit held has an expiry.
local now = now_ms()
reclaim(now)
local available = tonumber(redis.call('get', KEYS[1]))
if available and available >= 1 then
	redis.call('decrby', KEYS[1], 1)
	redis.call('zadd', KEYS[2], now + tonumber(ARGV[3]), ARGV[2])
	local ttl = redis.call('pttl', KEYS[1])
	if ttl > 0 then
		redis.call('pexpire', KEYS[2], ttl)
	end
	return nil
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) < permits_no_expiry then
	return math.max(tonumber(first[2]) - now, 1)
end
return -1
