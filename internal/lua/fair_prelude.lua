-- fair_prelude: helpers prepended to every fair lock script.
--
-- Every fair lock script receives the same KEYS:
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  queue LIST, redisson_lock_queue:{<name>}, of waiters' owner fields
-- KEYS[3]  timeout ZSET, redisson_lock_timeout:{<name>}: member = owner field,
--          score = epoch ms after which a silent waiter may be dropped
-- KEYS[4]  channel prefix, redisson_lock__channel:{<name>}. A Redisson
--          waiter listens on "<prefix>:<owner field>"; a relock client
--          listens for all its waiters on "<prefix>:<client id>"
--
-- "now" is the Redis server's clock (TIME), so clients with skewed clocks
-- cannot evict each other early. is_relock comes from relock_prelude.lua.

local function now_ms()
	local t = redis.call('time')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- live_head drops queue heads whose deadline has passed (waiters that
-- stopped retrying; only heads: a waiter behind a live one is never
-- judged) and returns the live head, if any, and the time, if it was
-- read.
local function live_head()
	local head = redis.call('lindex', KEYS[2], 0)
	if not head then
		return nil
	end
	local now = now_ms()
	while head do
		local deadline = tonumber(redis.call('zscore', KEYS[3], head))
		if deadline and deadline > now then
			return head, now
		end
		redis.call('lpop', KEYS[2])
		redis.call('zrem', KEYS[3], head)
		head = redis.call('lindex', KEYS[2], 0)
	end
	return nil, now
end

-- queue_margin is how long, in ms, the queue keys outlive the latest
-- deadline in them (bound_queue).
local queue_margin = 1000

-- bound_queue gives the queue and the timeout set the TTL every fair
-- script that writes them leaves: until queue_margin after the latest
-- deadline in the set, by the server's clock (now, when read already).
-- Past that deadline every entry may be dropped, so keys whose waiters
-- are all gone go by then even when nobody acquires again. A live relock
-- waiter pushes its deadline out at every try (fair_acquire.lua), and so
-- the TTL with it. Redisson's scripts neither clear the TTL (RPUSH, ZADD,
-- ZINCRBY keep it) nor set one: keys they create anew have none until a
-- relock script writes them.
local function bound_queue(now)
	local last = redis.call('zrange', KEYS[3], -1, -1, 'withscores')
	local ms = queue_margin
	if last[2] then
		now = now or now_ms()
		ms = math.max(math.floor(tonumber(last[2]) - now), 0) + queue_margin
	end
	redis.call('pexpire', KEYS[2], ms)
	redis.call('pexpire', KEYS[3], ms)
end

-- hand_over gives the free lock to the first waiter in the queue, if
-- any. A relock waiter is granted it directly: it leaves the queue, holds
-- one hold with a lease of lease ms, and its client is told on the
-- client's channel with the message "<owner>:<lease>". When nobody
-- listens there, the client is gone: the waiter is dropped and the next
-- one considered. A relock waiter's deadline is not looked at: whether
-- it lives is what the PUBLISH tells. A Redisson waiter whose deadline
-- has passed is dropped; a live one is woken with "0" on its own channel
-- and takes the lock itself (its acquire script would count a granted
-- hold twice). The remaining waiters' deadlines are left as they are, so
-- a grant costs the same however long the queue.
local function hand_over(publish, lease)
	local now, popped
	while true do
		local head = redis.call('lpop', KEYS[2])
		if not head then
			if popped then
				bound_queue(now)
			end
			return
		end
		popped = true
		if is_relock(head) then
			redis.call('zrem', KEYS[3], head)
			local told = redis.call(publish, KEYS[4] .. ':' .. string.sub(head, 1, 36),
				string.sub(head, 38) .. ':' .. lease)
			if told > 0 then
				redis.call('hset', KEYS[1], head, 1)
				redis.call('pexpire', KEYS[1], lease)
				bound_queue(now)
				return
			end
		else
			now = now or now_ms()
			local deadline = tonumber(redis.call('zscore', KEYS[3], head))
			if deadline and deadline > now then
				redis.call('lpush', KEYS[2], head)
				redis.call(publish, KEYS[4] .. ':' .. head, '0')
				bound_queue(now)
				return
			end
			redis.call('zrem', KEYS[3], head)
		end
	end
end
