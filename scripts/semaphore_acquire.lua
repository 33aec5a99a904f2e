-- semaphore_acquire: take permits from a semaphore (Redisson RSemaphore
-- layout), all or none.
--
-- KEYS[1]  permits STRING, the user's semaphore name: the available count
--          (absent: 0)
-- ARGV[1]  permits wanted, a positive integer of at most 2^53
--          (relock.MaxCount)
--
-- The comparison is exact although Lua numbers are doubles: ARGV[1] is
-- at most 2^53, so tonumber keeps it, and rounding is monotonic and
-- keeps 2^53, so a count at least ARGV[1] still compares at least
-- ARGV[1] when tonumber rounds it; a count below ARGV[1] is below 2^53
-- and not rounded at all. DECRBY then subtracts the exact string.
--
-- Reply: 1 when the available count was at least ARGV[1] and has been
-- decremented by it (DECRBY, which keeps the key's TTL); 0, changing
-- nothing, otherwise. Nothing is published: fewer permits wake nobody.
local available = redis.call('get', KEYS[1])
if available and tonumber(available) >= tonumber(ARGV[1]) then
	redis.call('decrby', KEYS[1], ARGV[1])
	return 1
end
return 0
