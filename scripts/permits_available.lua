-- permits_available: the count of available permits.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
--
-- Expired permits are reclaimed first.
--
-- Reply: the count; 0 when the semaphore has none set.
reclaim(now_ms())
return tonumber(redis.call('get', KEYS[1])) or 0
