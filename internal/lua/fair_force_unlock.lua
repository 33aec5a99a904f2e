-- fair_force_unlock: delete a fair lock whoever holds it. KEYS as in
-- fair_prelude.lua.
--
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[2]  lease in milliseconds of a hold handed to the next waiter
--
-- The holders are read before the lock is deleted and handed on, as in
-- force_unlock.lua, so that the caller can tell their clients.
--
-- Reply: {1, <field>...} when a lock was deleted (and handed to the
-- queue head), the fields being its holders' "<client id>:<owner>"
-- (none for a key of another type, which is deleted all the same); {0}
-- when none existed. Redisson's replies 1 or 0; the deletion and the
-- messages are the same.
local reply = {1}
for _, f in ipairs(redis.pcall('hkeys', KEYS[1])) do
	reply[#reply + 1] = f
end
if redis.call('del', KEYS[1]) == 0 then
	return {0}
end
hand_over(ARGV[1], ARGV[2])
return reply
