-- fair_give_up: leave a fair lock's queue (a wait that ended without the
-- lock). KEYS as in fair_prelude.lua.
--
-- ARGV[1]  owner field, "<client id>:<owner>"
-- ARGV[2]  wait timeout in milliseconds
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[4]  lease in milliseconds of a hold handed to the next waiter
-- ARGV[5]  "1" when the owner holds the lock on its client (another call
--          of the same owner took it), else "0": then a hold of the
--          caller's in the hash is a grant it did not take, and it is
--          passed on
--
-- Everyone behind the caller moves up one place, so their deadlines drop
-- by one wait, and the queue keys' TTL follows (bound_queue). When the caller was the head of a free lock, or was handed
-- the lock as it gave up, the lock goes to the next waiter.
--
-- Reply: 1 when the caller was queued or handed the lock, 0 when not.
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
	if ARGV[5] == '0' and redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
		redis.call('del', KEYS[1])
		hand_over(ARGV[3], ARGV[4])
		return 1
	end
	return 0
end
for i = pos + 1, #queue do
	redis.call('zincrby', KEYS[3], -tonumber(ARGV[2]), queue[i])
end
redis.call('lrem', KEYS[2], 0, ARGV[1])
if pos == 1 and redis.call('exists', KEYS[1]) == 0 then
	hand_over(ARGV[3], ARGV[4])
end
bound_queue()
return 1
