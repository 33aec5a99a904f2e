-- force_unlock: delete a lock whoever holds it.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  release channel, redisson_lock__channel:{<name>}
-- KEYS[3]  waiter registry, relock_lock_waiters:{<name>}
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[2]  lease in milliseconds of a hold granted to the next waiter
--
-- The holders are read before the lock is deleted (and perhaps granted
-- to a waiter), so that the caller can tell their clients (whose
-- channels are not in this slot: the caller publishes there).
--
-- Reply: {1, <field>...} when a lock was deleted (and its waiters told
-- as unlock.lua tells them), the fields being its holders'
-- "<client id>:<owner>" (none for a key of another type, which is
-- deleted all the same); {0} when none existed. Redisson's replies 1 or
-- 0; the deletion and the messages are the same.
local reply = {1}
for _, f in ipairs(redis.pcall('hkeys', KEYS[1])) do
	reply[#reply + 1] = f
end
if redis.call('del', KEYS[1]) == 0 then
	return {0}
end
hand_on(KEYS[1], KEYS[3], KEYS[2], ARGV[1], ARGV[2])
return reply
