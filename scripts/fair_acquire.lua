-- fair_acquire: take, re-enter or queue for a fair lock (Redisson
-- RFairLock layout). KEYS as in fair_prelude.lua.
--
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  wait timeout in milliseconds: how long a queued waiter may stay
--          silent before it is dropped
-- ARGV[4]  "1" to join the queue when the lock is taken, "0" to leave
--          nothing behind (a single try)
--
-- Reply: nil when the caller now holds the lock. Otherwise {turn, ms}:
-- {0, ms} the lock is held: ms is its PTTL (-1: no expiry); {1, ms} the
-- lock is free but an earlier waiter goes first: ms is the time until
-- that waiter may be dropped.
local now = now_ms()
local wait = tonumber(ARGV[3])
drop_stale(now)

local head = redis.call('lindex', KEYS[2], 0)
if redis.call('exists', KEYS[1]) == 0 and (not head or head == ARGV[2]) then
	if head then
		-- Everyone behind moves up one place: one wait less to wait.
		redis.call('lpop', KEYS[2])
		redis.call('zrem', KEYS[3], ARGV[2])
		local rest = redis.call('zrange', KEYS[3], 0, -1)
		for i = 1, #rest do
			redis.call('zincrby', KEYS[3], -wait, rest[i])
		end
	end
	redis.call('hset', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end

if ARGV[4] == '1' then
	local pos = redis.call('lpos', KEYS[2], ARGV[2])
	if pos then
		-- Already queued: keep the place alive. A waiter at position p
		-- (1 = head) is due at least p waits from now, so each place it
		-- moves up (one wait subtracted) still leaves it a full wait. GT
		-- keeps Redisson's initial deadline while that is later.
		redis.call('zadd', KEYS[3], 'XX', 'GT', now + (pos + 1) * wait, ARGV[2])
	else
		-- Join the tail: due one wait after the last waiter's deadline,
		-- or after the lock's TTL when nobody waits.
		local last = redis.call('lindex', KEYS[2], -1)
		local due = last and tonumber(redis.call('zscore', KEYS[3], last))
		local ttl
		if due then
			ttl = due - now
		else
			ttl = redis.call('pttl', KEYS[1])
		end
		redis.call('zadd', KEYS[3], ttl + wait + now, ARGV[2])
		redis.call('rpush', KEYS[2], ARGV[2])
	end
end

if redis.call('exists', KEYS[1]) == 1 then
	return {0, redis.call('pttl', KEYS[1])}
end
head = redis.call('lindex', KEYS[2], 0)
local due = tonumber(redis.call('zscore', KEYS[3], head)) or now
return {1, due - now}
