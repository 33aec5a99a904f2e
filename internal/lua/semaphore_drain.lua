-- semaphore_drain: take every available permit of a semaphore (Redisson
-- RSemaphore's drainPermits).
--
-- KEYS[1]  permits STRING, the user's semaphore name
--
-- An existing key is SET to 0 (which, as in Redisson, drops its TTL; a
-- negative count is raised to 0); an absent one stays absent. Nothing is
-- published: no permit became available.
--
-- Reply: the count the key held, 0 when it was absent.
local available = redis.call('get', KEYS[1])
if not available then
	return 0
end
redis.call('set', KEYS[1], 0)
return available
