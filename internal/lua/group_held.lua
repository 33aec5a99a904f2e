-- group_held: count the values of a group lock that are held. Preceded
-- by group_prelude.lua.
--
-- KEYS[1]     the group's hash
-- ARGV[1]     owner, "<client id>:<owner>", or "" for any holder
-- ARGV[2...]  the values' fields
--
-- Reply: how many of the values are held (by ARGV[1]'s owner, when
-- given): a holder whose expire_time is not passed.
local key, owner = KEYS[1], ARGV[1]
local now = now_ms()
local n = 0
for i = 2, #ARGV do
	local holder = redis.call('hget', key, ARGV[i])
	if holder and (owner == '' or holder == owner) then
		local expiry = tonumber(redis.call('hget', key, expiry_field(ARGV[i], holder)))
		if expiry and expiry >= now then
			n = n + 1
		end
	end
end
return n
