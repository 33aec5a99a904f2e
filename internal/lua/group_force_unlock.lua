-- group_force_unlock: free every value of a group lock, whoever holds
-- it. Preceded by group_prelude.lua.
--
-- KEYS[1]     the group's hash
-- KEYS[2]     the group's channel, "redisson_lock__channel:{<group>}"
-- ARGV[1]     publish command, PUBLISH or SPUBLISH
-- ARGV[2...]  the values' fields
--
-- Each value's three fields go. When any value had a holder, "1" is
-- published on the channel (wake every waiter on the group).
--
-- Reply: {1, <holder>...} when any value had a holder, the holders'
-- "<client id>:<owner>" each once, so that the caller can tell their
-- clients; {0} when none had.
local key = KEYS[1]
local reply, seen = {1}, {}
for i = 2, #ARGV do
	local value = ARGV[i]
	local holder = redis.call('hget', key, value)
	if holder then
		redis.call('hdel', key, value, expiry_field(value, holder), count_field(value, holder))
		if not seen[holder] then
			seen[holder] = true
			reply[#reply + 1] = holder
		end
	end
end
if #reply == 1 then
	return {0}
end
redis.call(ARGV[1], KEYS[2], '1')
return reply
