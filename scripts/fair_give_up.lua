-- fair_give_up: leave a fair lock's queue (a wait that ended without the
-- lock). KEYS as in fair_prelude.lua.
--
-- ARGV[1]  owner field, "<client id>:<owner>"
-- ARGV[2]  wait timeout in milliseconds
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Everyone behind the caller moves up one place, so their deadlines drop
-- by one wait. When the caller was the head of a free lock, the new head
-- is woken: the release it was told of is now that waiter's.
--
-- Reply: 1 when the caller was queued, 0 when not.
local queue = redis.call('lrange', KEYS[2], 0, -1)
local pos
for i = 1, #queue do
	if queue[i] == ARGV[1] then
		pos = i
		break
	end
end
redis.call('zrem', KEYS[3], ARGV[1])
if not pos then
	return 0
end
for i = pos + 1, #queue do
	redis.call('zincrby', KEYS[3], -tonumber(ARGV[2]), queue[i])
end
redis.call('lrem', KEYS[2], 0, ARGV[1])
if pos == 1 and redis.call('exists', KEYS[1]) == 0 then
	wake_head(ARGV[3])
end
return 1
