-- spin_force_unlock: delete a spin lock whoever holds it. As Redisson's
-- spin lock does (a plain DEL), it publishes nothing: spin waiters poll.
--
-- KEYS[1]  lock hash, the user's lock name
--
-- The holders are read before the lock is deleted, as in
-- force_unlock.lua, so that the caller can tell their clients.
--
-- Reply: {1, <field>...} when a lock was deleted, the fields being its
-- holders' "<client id>:<owner>" (none for a key of another type, which
-- is deleted all the same); {0} when none existed.
local reply = {1}
for _, f in ipairs(redis.pcall('hkeys', KEYS[1])) do
	reply[#reply + 1] = f
end
if redis.call('del', KEYS[1]) == 0 then
	return {0}
end
return reply
