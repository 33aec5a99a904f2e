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
-- incremented, the new count published and relock's waiters it can
-- satisfy woken (semaphore_prelude.lua); 0 when it was not (released
-- before, expired, or never taken), and nothing else changes.
local available = reclaim()
local released = redis.call('zrem', KEYS[6], ARGV[2])
if released == 1 then
	available = count_up(1)
	announce(available)
end
serve_all(available)
return released
