-- fair_unlock: release one hold of a fair lock. KEYS as in
-- fair_prelude.lua.
--
-- ARGV[1]  lease in milliseconds, applied again while holds remain, and
--          the lease of a hold handed to the next waiter
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[4]  "1" when the caller knows of one hold only: the field goes
--          without its count being read; "0" otherwise
--
-- Reply: nil when the caller holds no hold (a free lock is still handed
-- to the queue head, in case its last hand-over was lost); 0 when holds
-- remain; 1 when this was the last hold: the lock is handed to the queue
-- head (hand_over), or deleted when nobody waits.
local held
if ARGV[4] == '1' then
	-- The hash has no other field: removing the last one deletes it.
	held = redis.call('hdel', KEYS[1], ARGV[2]) == 1
else
	local count = redis.call('hget', KEYS[1], ARGV[2])
	if count and tonumber(count) > 1 then
		redis.call('hincrby', KEYS[1], ARGV[2], -1)
		redis.call('pexpire', KEYS[1], ARGV[1])
		return 0
	end
	held = count ~= false
	if held then
		redis.call('del', KEYS[1])
	end
end
if not held then
	if redis.call('exists', KEYS[1]) == 0 then
		hand_over(ARGV[3], ARGV[1])
	end
	return nil
end
hand_over(ARGV[3], ARGV[1])
return 1
