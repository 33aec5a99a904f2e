-- latch_delete: delete a count-down latch's count, opening the latch.
--
-- KEYS[1]  the count, a string at the latch's name
-- KEYS[2]  optional: the latch's channel, as in latch_try_set_count.lua
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: 1 when there was a count to delete, and "1" was published on
-- KEYS[2], or is due there; 0 when there was none.
if redis.call('del', KEYS[1]) == 0 then
	return 0
end
if #KEYS == 2 then
	redis.call(ARGV[1], KEYS[2], '1')
end
return 1
