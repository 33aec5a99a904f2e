-- semaphore_release: return permits to a semaphore (Redisson RSemaphore
-- layout) and wake the waiters they can satisfy.
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  permits returned, a positive integer
--
-- INCRBY creates the key when it is absent and keeps its TTL otherwise.
-- The new available count is published on the shared channel, as
-- Redisson's release does, for Redisson's waiters, and relock's waiters
-- it can satisfy are woken on their clients' channels (the prelude's
-- announce and serve). It is read back as the key's string: the INCRBY
-- reply reaches Lua as a number, a double, which past 2^53 is rounded
-- and past 10^17 is written in exponent form, which no listener parses.
-- Redis adds exactly, in 64 bits (a sum beyond them is an error, and
-- nothing changes).
--
-- Reply: the new available count, a decimal string.
redis.call('incrby', KEYS[1], ARGV[2])
local available = redis.call('get', KEYS[1])
announce(available)
serve_all(available)
return available
