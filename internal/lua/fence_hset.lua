-- fence_hset: HSET fields of a hash when the writer's token is not stale
-- (fence_prelude.lua has KEYS, ARGV[1] and the replies).
--
-- ARGV[2..]  field, value, field, value, ...
--
-- Reply: {1} when written, {0, <last token>} when stale.
local last = newer()
if last then
	return {0, last}
end
redis.call('hset', KEYS[2], unpack(ARGV, 2))
redis.call('set', KEYS[1], ARGV[1])
return {1}
