-- fair_prelude: helpers prepended to every fair lock script.
--
-- Every fair lock script receives the same KEYS:
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  queue LIST, redisson_lock_queue:{<name>}, of waiters' owner fields
-- KEYS[3]  timeout ZSET, redisson_lock_timeout:{<name>}: member = owner field,
--          score = epoch ms after which a silent waiter may be dropped
-- KEYS[4]  channel prefix, redisson_lock__channel:{<name>}; a waiter listens
--          on "<prefix>:<owner field>"
--
-- "now" is the Redis server's clock (TIME), so clients with skewed clocks
-- cannot evict each other early.

local function now_ms()
	local t = redis.call('time')
	return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Drop queue heads whose deadline has passed: waiters that stopped
-- retrying. Only heads: a waiter behind a live one is never judged.
local function drop_stale(now)
	while true do
		local head = redis.call('lindex', KEYS[2], 0)
		if not head then
			return
		end
		local deadline = tonumber(redis.call('zscore', KEYS[3], head))
		if deadline and deadline > now then
			return
		end
		redis.call('lpop', KEYS[2])
		redis.call('zrem', KEYS[3], head)
	end
end

-- Wake the queue head, if any, on its own channel.
local function wake_head(publish)
	local head = redis.call('lindex', KEYS[2], 0)
	if head then
		redis.call(publish, KEYS[4] .. ':' .. head, '0')
	end
end
