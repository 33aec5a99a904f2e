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
-- many of its waiters at most. It is read back as the key's string: the
-- INCRBY reply reaches Lua as a number, a double, which past 2^53 is
-- rounded and past 10^17 is written in exponent form, which no listener
-- parses. Redis adds exactly, in 64 bits (a sum beyond them is an error,
-- and nothing changes).
--
-- Reply: the new available count, a decimal string.
redis.call('incrby', KEYS[1], ARGV[1])
local available = redis.call('get', KEYS[1])
redis.call(ARGV[2], KEYS[2], available)
return available
