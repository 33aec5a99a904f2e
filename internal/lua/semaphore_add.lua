-- semaphore_add: change a semaphore's available count by a delta
-- (Redisson RSemaphore's addPermits).
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  delta, an integer: negative takes permits away
--
-- Redisson writes the sum with SET, so the key is left without a TTL;
-- INCRBY and PERSIST leave the same record, with exact integer
-- arithmetic; the grants, which live as long as the count, lose their
-- TTL too. relock's waiters the new count can satisfy are handed their
-- permits, and what they leave is published, as in semaphore_release.lua
-- (a count below 1 serves nobody, and is published).
--
-- Reply: 1.
grants = KEYS[6]
offer(ARGV[2])
redis.call('persist', KEYS[1])
redis.call('persist', KEYS[6])
return 1
