-- fair_force_unlock: delete a fair lock whoever holds it. KEYS as in
-- fair_prelude.lua.
--
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[2]  lease in milliseconds of a hold handed to the next waiter
--
-- Reply: 1 when a lock was deleted (and handed to the queue head), 0
-- when none existed.
if redis.call('del', KEYS[1]) == 1 then
	hand_over(ARGV[1], ARGV[2])
	return 1
end
return 0
