-- group_prelude: helpers prepended to every group-lock script (Redisson
-- RedissonFasterMultiLock).
--
-- A group lock's record is one hash, the group, with three fields for each
-- value held: "<value>" names the holder, "<client id>:<owner>";
-- "<value>:<holder>:expire_time" is the end of the holder's lease in epoch
-- milliseconds; "<value>:<holder>:lock_count" counts its holds. "<value>"
-- is the value's hash (Redisson's Hash.hash128toBase64 of its encoding),
-- which the caller passes. A value is held while its expire_time is ahead
-- of now: the hash's TTL only bounds the whole record.

-- now is the Redis server's clock in milliseconds (TIME): relock clients
-- with skewed clocks agree on whose lease has run out. Redisson's clients
-- send their own clock instead.
local function now_ms()
	local t = redis.call('time')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- expiry_field and count_field name holder's fields for value.
local function expiry_field(value, holder)
	return value .. ':' .. holder .. ':expire_time'
end
local function count_field(value, holder)
	return value .. ':' .. holder .. ':lock_count'
end

-- extend sets holder's expire_time for value to deadline, unless it is later
-- already.
local function extend(key, value, holder, deadline)
	local f = expiry_field(value, holder)
	local expiry = tonumber(redis.call('hget', key, f))
	if not expiry or expiry < deadline then
		redis.call('hset', key, f, deadline)
	end
end

-- cover makes the hash live at least lease ms: the record outlives every
-- lease in it.
local function cover(key, lease)
	if redis.call('pttl', key) < lease then
		redis.call('pexpire', key, lease)
	end
end
