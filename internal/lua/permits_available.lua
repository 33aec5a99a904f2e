-- permits_available: the count of available permits.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
--
-- Expired permits are reclaimed first, and the waiters they can satisfy
-- woken.
--
-- Reply: the count as the key holds it, a decimal string (a Lua number
-- would round it past 2^53); 0 when the semaphore has none set.
serve_all(reclaim())
return redis.call('get', KEYS[1]) or 0
