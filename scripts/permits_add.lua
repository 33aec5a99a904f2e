-- permits_add: add to the count of available permits (a negative delta
-- takes away); an absent count counts as 0.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the delta
--
-- A positive delta is published, as Redisson does: that many more
-- waiters may take a permit.
--
-- Reply: nil.
redis.call('incrby', KEYS[1], ARGV[2])
if tonumber(ARGV[2]) > 0 then
	redis.call(ARGV[1], KEYS[3], ARGV[2])
end
