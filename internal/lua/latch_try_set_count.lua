-- latch_try_set_count: give a count-down latch its count, if it has none.
--
-- KEYS[1]  the count, a string at the latch's name
-- KEYS[2]  optional: the latch's channel,
--          redisson_countdownlatch__channel__{<name>}. Given when it
--          hashes to KEYS[1]'s cluster slot (or there are no slots); left
--          out otherwise, and the caller publishes the message itself.
-- ARGV[1]  the count, a positive integer
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[3]  the count's time to live in ms, or 0 for none (Redisson's
--          trySetCount sets none; its countDown, a DECR, keeps one)
--
-- Reply: 1 when the count was set, and "1" (a new count) published on
-- KEYS[2], or due there; 0 when the latch already had a count (nothing
-- changes).
if redis.call('exists', KEYS[1]) == 1 then
	return 0
end
if ARGV[3] == '0' then
	redis.call('set', KEYS[1], ARGV[1])
else
	redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[3])
end
if #KEYS == 2 then
	redis.call(ARGV[2], KEYS[2], '1')
end
return 1
