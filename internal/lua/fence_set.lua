-- fence_set: SET a key when the writer's token is not stale
-- (fence_prelude.lua has KEYS, ARGV[1] and the replies).
--
-- ARGV[2]  the value
-- ARGV[3]  its TTL in milliseconds: '0' for none, 'keep' to keep the
--          key's own (KEEPTTL)
--
-- Reply: {1} when written, {0, <last token>} when stale.
local last = newer()
if last then
	return {0, last}
end
if ARGV[3] == '0' then
	redis.call('set', KEYS[2], ARGV[2])
elseif ARGV[3] == 'keep' then
	redis.call('set', KEYS[2], ARGV[2], 'keepttl')
else
	redis.call('set', KEYS[2], ARGV[2], 'px', ARGV[3])
end
redis.call('set', KEYS[1], ARGV[1])
return {1}
