-- semaphore_add: change a semaphore's available count by a delta
-- (Redisson RSemaphore's addPermits).
--
-- KEYS[1]  permits STRING, the user's semaphore name
-- KEYS[2]  channel, redisson_sc:{<name>}
-- ARGV[1]  delta, an integer: negative takes permits away
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Redisson writes the sum with SET, so the key is left without a TTL;
-- INCRBY and PERSIST leave the same record, with exact integer
-- arithmetic. The new count is published (a count below 1 wakes nobody),
-- read back as the key's string as in semaphore_release.lua: a Lua
-- number would round it.
--
-- Reply: the new available count, a decimal string.
redis.call('incrby', KEYS[1], ARGV[1])
redis.call('persist', KEYS[1])
local available = redis.call('get', KEYS[1])
redis.call(ARGV[2], KEYS[2], available)
return available
