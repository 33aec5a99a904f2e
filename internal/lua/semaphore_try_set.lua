-- semaphore_try_set: set a semaphore's available count if it has none
-- (Redisson RSemaphore's trySetPermits).
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  permits, an integer
-- ARGV[3]  time to live in milliseconds, "0" for none
--
-- Reply: 1 when the key was absent and was set to ARGV[2] (with PX
-- ARGV[3] when that is not "0"), and relock's waiters it can satisfy were
-- handed their permits and what they left published, as in
-- semaphore_release.lua; 0, changing nothing, when the key exists.
local set
if ARGV[3] == '0' then
	set = redis.call('set', KEYS[1], ARGV[2], 'nx')
else
	set = redis.call('set', KEYS[1], ARGV[2], 'px', ARGV[3], 'nx')
end
if not set then
	return 0
end
grants = KEYS[6]
offer(nil)
return 1
