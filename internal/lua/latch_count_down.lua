-- latch_count_down: count a count-down latch down by one.
--
-- KEYS[1]  the count, a string at the latch's name
-- KEYS[2]  optional: the latch's channel, as in latch_try_set_count.lua
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- The count goes when it reaches zero: a latch without a count is open.
-- Counting down an open latch leaves it open.
--
-- Reply: 1 when this call took the count to zero, and "0" (open) was
-- published on KEYS[2], or is due there; 0 otherwise.
local count = redis.call('decr', KEYS[1])
if count > 0 then
	return 0
end
redis.call('del', KEYS[1])
if count < 0 then
	return 0
end
if #KEYS == 2 then
	redis.call(ARGV[1], KEYS[2], '0')
end
return 1
