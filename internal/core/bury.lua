-- bury: record that relock gave up an owner's acquire attempts, so that
-- one of them that runs late changes nothing (relock_prelude.lua's late).
--
-- KEYS[1]  relock's record of given-up attempts,
--          relock_lock_gone:{<name>}: a hash, field = owner field, value =
--          the highest attempt number given up
-- ARGV[1]  owner field
-- ARGV[2]  the highest number among the attempts given up
-- ARGV[3]  how long the record lasts, in milliseconds: at least the lease
--          a late attempt would set, so that one running after the record
--          is gone holds the lock no longer than that lease
--
-- The record only grows: a lower number than the one recorded changes
-- nothing but the record's TTL, which only grows too.
--
-- Reply: 1.
local last = redis.call('hget', KEYS[1], ARGV[1])
if not last or tonumber(last) < tonumber(ARGV[2]) then
	redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
end
if redis.call('pttl', KEYS[1]) < tonumber(ARGV[3]) then
	redis.call('pexpire', KEYS[1], ARGV[3])
end
return 1
