-- fair_force_unlock: delete a fair lock whoever holds it. KEYS as in
-- fair_prelude.lua.
--
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[2]  lease in milliseconds of a hold handed to the next waiter
--
-- The holders are read before the lock is deleted and handed on, as in
-- force_unlock.lua, so that the caller can tell their clients.
--
-- A free lock's queue keys (left by waiters that are gone, or kept by
-- waiters between two tries) are handed on as a release would, which
-- grants the lock to the first relock waiter that listens and drops the
-- gone ones before it (hand_over); when nobody was granted it, what is
-- left of them is deleted: a Redisson head so woken finds no queue and
-- takes the lock, and a live waiter behind it queues again at its next
-- try.
--
-- Reply: {1, <field>...} when a lock was deleted (and handed to the
-- queue head), the fields being its holders' "<client id>:<owner>"
-- (none for a key of another type, which is deleted all the same); {2}
-- when no lock existed but its queue keys did; {0} when neither did.
-- Redisson's replies 1 or 0; the deletion and the messages are the same.
local reply = {1}
for _, f in ipairs(redis.pcall('hkeys', KEYS[1])) do
	reply[#reply + 1] = f
end
if redis.call('del', KEYS[1]) == 0 then
	if redis.call('exists', KEYS[2], KEYS[3]) == 0 then
		return {0}
	end
	hand_over(ARGV[1], ARGV[2])
	if redis.call('exists', KEYS[1]) == 0 then
		redis.call('del', KEYS[2], KEYS[3])
	end
	return {2}
end
hand_over(ARGV[1], ARGV[2])
return reply
