-- semaphore_release: return permits to a semaphore (Redisson RSemaphore
-- layout) and hand them to the waiters they can satisfy.
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  permits returned, a positive integer
-- ARGV[3]  grants the caller's client acknowledges, members separated by
--          "," ("" for none)
--
-- INCRBY creates the key when it is absent and keeps its TTL otherwise.
-- relock's waiters it can satisfy are handed their permits (the
-- prelude's offer), and the count they leave, if positive, is published
-- on the shared channel, as Redisson's release publishes its count, for
-- Redisson's waiters. The count is read back as the key's string: the INCRBY
-- reply reaches Lua as a number, a double, which past 2^53 is rounded
-- and past 10^17 is written in exponent form, which no listener parses.
-- Redis adds exactly, in 64 bits (a sum beyond them is an error, and
-- nothing changes).
--
-- Reply: 1.
grants = KEYS[6]
attempts = KEYS[7]
acknowledge(ARGV[3])
offer(ARGV[2])
return 1
