-- fair_acquire: take, re-enter or queue for a fair lock (Redisson
-- RFairLock layout). KEYS as in fair_prelude.lua.
--
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  wait timeout in milliseconds: how long a queued waiter may stay
--          silent before it is dropped
-- ARGV[4]  "0": take the lock only if it is free and nobody else is
--          queued, and leave nothing behind (a single try, or a waiter not
--          yet listening for its grant); "1": take, re-enter or join the
--          queue; "2": as "1" for an owner that holds nothing on its
--          client: its field in the hash is a grant (hand_over) to one of
--          its calls, which it takes as it is, one hold, the lease reset;
--          "3": as "0" for such an owner, taking its field as "2"
-- ARGV[5]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[6]  optional; "1" for a non-reentrant lock (Redisson
--          RedissonNonReentrantFairLock): with ARGV[4] "0" or "1", a
--          caller whose field is in the hash is refused, not counted
-- ARGV[7]  optional, with KEYS[5], relock's record of given-up attempts
--          (acquire.lua; its other KEYS are fair_prelude.lua's): the
--          attempt's number
--
-- Reply: 1 when the caller now holds the lock; the error
-- NON_REENTRANT_REACQUIRE, Redisson's, when ARGV[6] refuses the caller,
-- and nothing changes. Otherwise {turn, ms, foreign}: turn 0, the lock
-- is held and ms is its PTTL (-1: no expiry); turn 1, the lock is free
-- but an earlier waiter goes first and ms is the time until that waiter
-- may be dropped. foreign is 1 when the caller joined the queue right
-- behind a holder or waiter that is not a relock client: that one wakes
-- the caller on the caller's own channel. 0 when the attempt is late
-- (acquire.lua): nothing changes.
if late(KEYS[5], ARGV[2], ARGV[7]) then
	return 0
end
local ttl = redis.call('pttl', KEYS[1])
local head, now
if ttl == -2 then
	head, now = live_head()
	if head and head ~= ARGV[2] and is_relock(head) then
		-- The lock expired, or its release was told to nobody (a
		-- Redisson unlock woke a waiter that has gone since): hand it on
		-- now rather than when the head's timer fires.
		hand_over(ARGV[5], ARGV[1])
		if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
			-- The waiters ahead were gone and the lock went to the
			-- caller (its client is told too, and finds no waiter):
			-- it holds the lock, and is out of the queue (hand_over
			-- bounded what is left of it).
			return 1
		end
		head = redis.call('lindex', KEYS[2], 0)
		ttl = redis.call('pttl', KEYS[1])
	end
	if ttl == -2 and (not head or head == ARGV[2]) then
		if now then
			-- The queue existed: live_head or the take may have written it.
			if head then
				redis.call('lpop', KEYS[2])
				redis.call('zrem', KEYS[3], head)
			end
			bound_queue(now)
		end
		redis.call('hset', KEYS[1], ARGV[2], 1)
		redis.call('pexpire', KEYS[1], ARGV[1])
		return 1
	end
elseif redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	if ARGV[4] == '0' or ARGV[4] == '1' then
		if ARGV[6] == '1' then
			return redis.error_reply('NON_REENTRANT_REACQUIRE')
		end
		redis.call('hincrby', KEYS[1], ARGV[2], 1)
	end
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 1
end

-- The time was read when the queue existed (live_head).
local queued = now ~= nil
now = now or now_ms()
local wait = tonumber(ARGV[3])
local foreign = 0
if ARGV[4] == '1' or ARGV[4] == '2' then
	-- Join the tail, due the lock's TTL and one wait per place from now.
	-- (Redisson chains each deadline to the last waiter's and moves them
	-- all up at every grant; relock's grants do not, so a chained
	-- deadline would grow without bound.) A waiter that was queued
	-- already keeps its place instead (ZADD NX adds nothing): a waiter
	-- at place p (1 = head) is due at least p waits from now, and a grant
	-- does not move deadlines, so it keeps a full wait; GT keeps a later
	-- deadline (Redisson's, or one set at joining).
	local places = redis.call('rpush', KEYS[2], ARGV[2])
	if redis.call('zadd', KEYS[3], 'NX', now + math.max(ttl, 0) + places * wait, ARGV[2]) == 1 then
		-- Whoever comes right before the caller wakes it: the waiter
		-- ahead, or the holder when nobody else waits.
		if places > 1 then
			if not is_relock(redis.call('lindex', KEYS[2], -2)) then
				foreign = 1
			end
		elseif ttl ~= -2 then
			for _, f in ipairs(redis.call('hkeys', KEYS[1])) do
				if not is_relock(f) then
					foreign = 1
				end
			end
		end
	else
		redis.call('lrem', KEYS[2], -1, ARGV[2])
		local pos = redis.call('lpos', KEYS[2], ARGV[2])
		if pos then
			redis.call('zadd', KEYS[3], 'XX', 'GT', now + (pos + 1) * wait, ARGV[2])
		else
			-- In the sorted set but not in the queue: queue it again.
			redis.call('rpush', KEYS[2], ARGV[2])
			redis.call('zadd', KEYS[3], now + math.max(ttl, 0) + places * wait, ARGV[2])
		end
	end
	bound_queue(now)
elseif queued then
	-- live_head or hand_over may have written the queue.
	bound_queue(now)
end

if ttl ~= -2 then
	return {0, ttl, foreign}
end
head = redis.call('lindex', KEYS[2], 0)
local due = tonumber(redis.call('zscore', KEYS[3], head)) or now
return {1, due - now, foreign}
