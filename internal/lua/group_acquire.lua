-- group_acquire: take or re-enter every value of a group lock at once
-- (Redisson RedissonFasterMultiLock), or none. Preceded by
-- group_prelude.lua.
--
-- KEYS[1]     the group's hash, the user's group name
-- KEYS[2]     optional: relock's record of given-up attempts on the group,
--             relock_lock_gone:{<group>} (acquire.lua)
-- ARGV[1]     lease in milliseconds
-- ARGV[2]     owner, "<client id>:<owner>"
-- ARGV[3...]  the values' fields, each once; with KEYS[2], ARGV[3] is the
--             attempt's number (acquire.lua) and the fields follow it
--
-- The hash is swept first (group_prelude.lua). A value is taken when
-- another owner holds it and that holder's expire_time is ahead of now. A holder whose lease ran out is replaced,
-- and its records for the value dropped; so is the caller's own record of
-- a hold that ran out, which starts its count again.
--
-- Reply: 1 when the caller now holds every value (each count + 1, each
-- expire_time at least now + lease, the hash's TTL at least lease);
-- otherwise {ms}, the time until the last lease among the taken values
-- runs out, and nothing changed. 0 when the attempt is late (acquire.lua):
-- nothing changes.
local key, lease, owner = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local first = 3
if KEYS[2] then
	if late(KEYS[2], owner, ARGV[3]) then
		return 0
	end
	first = 4
end
local now = now_ms()
sweep(key, now)
local wait = 0
for i = first, #ARGV do
	local holder = redis.call('hget', key, ARGV[i])
	if holder and holder ~= owner then
		local expiry = tonumber(redis.call('hget', key, expiry_field(ARGV[i], holder)))
		if expiry and expiry - now > wait then
			wait = expiry - now
		end
	end
end
if wait > 0 then
	return {wait}
end
for i = first, #ARGV do
	local value = ARGV[i]
	local holder = redis.call('hget', key, value)
	if holder then
		local expiry = tonumber(redis.call('hget', key, expiry_field(value, holder)))
		if holder ~= owner or not expiry or expiry < now then
			redis.call('hdel', key, expiry_field(value, holder), count_field(value, holder))
		end
	end
	redis.call('hset', key, value, owner)
	extend(key, value, owner, now + lease)
	redis.call('hincrby', key, count_field(value, owner), 1)
end
cover(key, lease)
return 1
