-- semaphore_add: change a semaphore's available count by a delta
-- (Redisson RSemaphore's addPermits).
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  delta, an integer: negative takes permits away
--
-- Redisson writes the sum with SET, so the key is left without a TTL;
-- INCRBY and PERSIST leave the same record, with exact integer
-- arithmetic. The new count is published and relock's waiters it can
-- satisfy are woken, as in semaphore_release.lua (a count below 1 wakes
-- nobody), read back as the key's string.
--
-- Reply: the new available count, a decimal string.
redis.call('incrby', KEYS[1], ARGV[2])
redis.call('persist', KEYS[1])
local available = redis.call('get', KEYS[1])
announce(available)
serve_all(available)
return available
