-- group_unlock: release one hold of every value of a group lock.
-- Preceded by group_prelude.lua.
--
-- KEYS[1]     the group's hash
-- KEYS[2]     the group's channel, "redisson_lock__channel:{<group>}"
-- ARGV[1]     lease in milliseconds, applied again to values still held
-- ARGV[2]     owner, "<client id>:<owner>"
-- ARGV[3]     publish command, PUBLISH or SPUBLISH
-- ARGV[4]     "1" when the caller knows of one hold only, "0" otherwise
-- ARGV[5...]  the values' fields
--
-- The hash is swept first (group_prelude.lua). Every value the owner
-- holds (its expire_time not passed) loses a hold; at 0 its three fields
-- go. The owner's fields for a value whose lease ran out go too, as
-- does the value's own when it still names the owner: an unlock after
-- the lease leaves nothing of the hold. Only a hold extended pushes the
-- hash's TTL out; otherwise a small hash's TTL is cut to its latest live
-- lease, and a hash that holds nothing live goes (fit). A release that
-- frees any value publishes "1" on the channel, which wakes every waiter
-- on the group, Redisson's too: any of them may want that value, where
-- "0" would wake one per client, perhaps one whose values are still
-- taken.
--
-- Reply: nil when the owner did not hold every value (those it held lost
-- a hold all the same); 1 when a value was freed, or ARGV[4] is "1" (the
-- caller's last hold of this set; the owner's other sets may hold its
-- values still); 0 when every value is still held.
local key, lease, owner = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local now = now_ms()
sweep(key, now)
local missing, freed, extended = false, false, false
for i = 5, #ARGV do
	local value = ARGV[i]
	local expiry = tonumber(redis.call('hget', key, expiry_field(value, owner)))
	local holder = redis.call('hget', key, value)
	if holder == owner and expiry and expiry >= now then
		if redis.call('hincrby', key, count_field(value, owner), -1) <= 0 then
			redis.call('hdel', key, value, expiry_field(value, owner), count_field(value, owner))
			freed = true
		else
			extend(key, value, owner, now + lease)
			extended = true
		end
	else
		if holder == owner then
			redis.call('hdel', key, value)
		end
		redis.call('hdel', key, expiry_field(value, owner), count_field(value, owner))
		missing = true
	end
end
if freed then
	redis.call(ARGV[3], KEYS[2], '1')
end
if extended then
	cover(key, lease)
else
	fit(key, now)
end
if missing then
	return nil
end
if freed or ARGV[4] == '1' then
	return 1
end
return 0
