-- bury: record that relock gave up an owner's acquire attempts, so that
-- one of them that runs late changes nothing (relock_prelude.lua's late).
--
-- KEYS[1]  relock's record of given-up attempts,
--          relock_lock_gone:{<name>}: a hash, field = owner field, value =
--          the highest attempt number given up
-- KEYS[2]  when the record's entries may go,
--          relock_lock_gone_due:{<name>}: a ZSET, member = owner field,
--          score = the server's epoch ms until which the field's entry
--          in KEYS[1] must last
-- ARGV[1]  owner field
-- ARGV[2]  the highest number among the attempts given up
-- ARGV[3]  how long the entry lasts, in milliseconds: at least the lease
--          a late attempt would set, so that one running after the entry
--          is gone holds the lock no longer than that lease
--
-- Each entry lasts its own bound, and goes soon after: a write first
-- removes up to sweep entries whose time has passed (the earliest
-- first), then records the field (a lower number than the one recorded
-- changes only the entry's time, which only grows) and gives both keys
-- the time of the entry that lasts longest, never of one already past.
-- A write adds at most one entry and removes up to sweep past ones, so
-- past entries go faster than they come while give-ups go on, and the
-- record holds about the fields given up within their bound; once
-- give-ups stop, both keys expire with their last entry. Times are the
-- server's clock (TIME), whatever the clients' clocks say.
--
-- Reply: 1.
local sweep = 8
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local done = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'LIMIT', 0, sweep)
if #done > 0 then
	redis.call('hdel', KEYS[1], unpack(done))
	redis.call('zrem', KEYS[2], unpack(done))
end
local last = redis.call('hget', KEYS[1], ARGV[1])
if not last or tonumber(last) < tonumber(ARGV[2]) then
	redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
end
redis.call('zadd', KEYS[2], 'GT', now + tonumber(ARGV[3]), ARGV[1])
-- PEXPIRE, not PEXPIREAT: the commands relock's ACL user needs stay
-- the same (docs/operations.md).
local left = tonumber(redis.call('zrange', KEYS[2], -1, -1, 'WITHSCORES')[2]) - now
redis.call('pexpire', KEYS[1], left)
redis.call('pexpire', KEYS[2], left)
return 1
