-- semaphore_release: return permits to a semaphore (Redisson RSemaphore
-- layout) and wake as many waiters.
--
-- KEYS[1]  permits STRING, the user's semaphore name
-- KEYS[2]  channel, redisson_sc:{<name>}
-- ARGV[1]  permits returned, a positive integer
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- INCRBY creates the key when it is absent and keeps its TTL otherwise.
-- The new available count is published: each listening client wakes that
-- many of its waiters at most.
--
-- Reply: the new available count.
local available = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], available)
return available
