-- group_renew: extend the lease of every value of a group lock the
-- caller still holds (watchdog). Preceded by group_prelude.lua.
--
-- KEYS[1]     the group's hash
-- ARGV[1]     lease in milliseconds
-- ARGV[2]     owner, "<client id>:<owner>"
-- ARGV[3...]  the values' fields
--
-- The hash is swept first (group_prelude.lua), which drops a value whose
-- lease ran out before its renewal came.
--
-- Reply: 1 when the owner holds every value, each expire_time now at
-- least now + lease and the hash's TTL at least lease; 0, changing
-- nothing, when any value is gone or another's, which the watchdog
-- reports as a lost lease.
local key, lease, owner = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local now = now_ms()
sweep(key, now)
for i = 3, #ARGV do
	if redis.call('hget', key, ARGV[i]) ~= owner then
		return 0
	end
end
local deadline = now + lease
for i = 3, #ARGV do
	extend(key, ARGV[i], owner, deadline)
end
cover(key, lease)
return 1
