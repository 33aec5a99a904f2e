-- semaphore_try_set: set a semaphore's available count if it has none
-- (Redisson RSemaphore's trySetPermits).
--
-- KEYS[1]  permits STRING, the user's semaphore name
-- KEYS[2]  channel, redisson_sc:{<name>}
-- ARGV[1]  permits, an integer
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[3]  time to live in milliseconds, "0" for none
--
-- Reply: 1 when the key was absent and now holds ARGV[1] (with PX ARGV[3]
-- when that is not "0"), and ARGV[1] was published; 0, changing nothing,
-- when the key exists.
local set
if ARGV[3] == '0' then
	set = redis.call('set', KEYS[1], ARGV[1], 'nx')
else
	set = redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[3], 'nx')
end
if not set then
	return 0
end
redis.call(ARGV[2], KEYS[2], ARGV[1])
return 1
