-- permits_release: give back one permit by its id.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the permit's id: 16 raw bytes
--
-- Expired permits are reclaimed first, so a permit whose expiry has come
-- counts as released already.
--
-- Reply: 1 when the permit was held: it is removed, the count
-- incremented and the new count published; 0 when it was not (released
-- before, expired, or never taken), and nothing else changes.
reclaim(now_ms())
if redis.call('zrem', KEYS[2], ARGV[2]) == 0 then
	return 0
end
redis.call(ARGV[1], KEYS[3], count_up(1))
return 1
