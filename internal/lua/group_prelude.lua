-- group_prelude: helpers prepended to every group-lock script (Redisson
-- RedissonFasterMultiLock).
--
-- A group lock's record is one hash, the group, with three fields for each
-- value held: "<value>" names the holder, "<client id>:<owner>";
-- "<value>:<holder>:expire_time" is the end of the holder's lease in epoch
-- milliseconds; "<value>:<holder>:lock_count" counts its holds. "<value>"
-- is the value's hash (Redisson's Hash.hash128toBase64 of its encoding),
-- which the caller passes. A value is held while its expire_time is ahead
-- of now: the hash's TTL only bounds the whole record. Every script that
-- changes the hash sweeps it first (sweep), so that the fields of values
-- whose holders stopped without an unlock do not pile up.

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

-- cover makes the hash live at least lease ms, the lease of a hold just
-- taken or extended: the record outlives every live lease in it, and
-- only a live hold pushes its TTL out.
local function cover(key, lease)
	if redis.call('pttl', key) < lease then
		redis.call('pexpire', key, lease)
	end
end

-- sweep_sample is how many of the hash's fields one sweep looks at.
local sweep_sample = 16

-- sweep removes the records of values whose holder's lease has run out
-- by now, and the expire_time and lock_count fields of holders a value
-- no longer names (Redisson's acquire leaves them when it replaces a
-- holder). It looks at sweep_sample fields drawn at random (HRANDFIELD;
-- all of them in a hash that small), so its work is bounded whatever
-- the hash holds: each call that finds a dead value's field removes that
-- value's three, and as every acquire, renewal and unlock sweeps, a dead
-- value lasts a few calls in a hash of mostly live values. A field of
-- another form is left alone.
local function sweep(key, now)
	for _, f in ipairs(redis.call('hrandfield', key, sweep_sample)) do
		local value, holder = f, nil
		local c = string.find(f, ':', 1, true)
		if not c then
			holder = redis.call('hget', key, f)
		elseif string.sub(f, -12) == ':expire_time' then
			value, holder = string.sub(f, 1, c - 1), string.sub(f, c + 1, -13)
		elseif string.sub(f, -11) == ':lock_count' then
			value, holder = string.sub(f, 1, c - 1), string.sub(f, c + 1, -12)
		end
		if holder then
			if redis.call('hget', key, value) ~= holder then
				redis.call('hdel', key, expiry_field(value, holder), count_field(value, holder))
			else
				local expiry = tonumber(redis.call('hget', key, expiry_field(value, holder)))
				if not expiry or expiry < now then
					redis.call('hdel', key, value, expiry_field(value, holder), count_field(value, holder))
				end
			end
		end
	end
end

-- fit sets the hash's TTL to the latest live lease in it, or deletes a
-- hash in which no value is held any more, when the hash is small enough
-- (at most sweep_sample fields) to be read whole; a larger one keeps its
-- TTL, which no more than the lease of a live hold pushed out.
local function fit(key, now)
	if redis.call('hlen', key) > sweep_sample then
		return
	end
	local latest = -1
	for _, f in ipairs(redis.call('hkeys', key)) do
		if not string.find(f, ':', 1, true) then
			local expiry = tonumber(redis.call('hget', key, expiry_field(f, redis.call('hget', key, f))))
			if expiry and expiry >= now and expiry > latest then
				latest = expiry
			end
		end
	end
	if latest < 0 then
		redis.call('del', key)
	else
		redis.call('pexpire', key, latest - now + 1)
	end
end
