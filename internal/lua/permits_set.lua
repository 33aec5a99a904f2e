-- permits_set: set the count of available permits if none is set.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the count
--
-- Reply: 1 when the count was set, published and relock's waiters it can
-- satisfy woken (semaphore_prelude.lua); 0 when one was set already
-- (nothing changes).
if redis.call('exists', KEYS[1]) == 1 then
	return 0
end
redis.call('set', KEYS[1], ARGV[2])
announce(ARGV[2])
serve_all(ARGV[2])
return 1
