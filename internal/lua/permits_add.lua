-- permits_add: add to the count of available permits (a negative delta
-- takes away); an absent count counts as 0.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the delta
--
-- A positive delta is published, as Redisson does (that many more
-- waiters may take a permit), and relock's waiters the new count can
-- satisfy are woken (semaphore_prelude.lua).
--
-- Reply: nil.
redis.call('incrby', KEYS[1], ARGV[2])
if tonumber(ARGV[2]) > 0 then
	announce(ARGV[2])
	serve_all(redis.call('get', KEYS[1]))
end
