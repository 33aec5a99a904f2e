-- rw_read_renew: extend the caller's read holds (watchdog).
--
-- KEYS[1]  lock hash (see rw_read_acquire.lua)
-- KEYS[2]  the caller's timeout key prefix (see rw_read_acquire.lua)
-- KEYS[3]  optional: every reader's timeout key prefix, "{<name>}": the
--          fields of dead readers are dropped first (rw_prelude.lua's
--          drop_dead)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the caller's reader field
--
-- Only the caller's own timeout keys are extended, never other readers':
-- a reader that died stops holding the lock when its own leases end.
--
-- A caller whose own timeout keys are all gone holds nothing any more:
-- its leases ran out before this renewal; its field goes, and the hash
-- too when its "mode" is all that is left.
--
-- Reply: 1 when the caller holds read holds (renewed), 0 when it holds
-- none.
drop_dead(KEYS[1], KEYS[3])
local n = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if not n then
	return 0
end
if KEYS[3] and reader_dead(KEYS[3], ARGV[2], n) then
	redis.call('hdel', KEYS[1], ARGV[2])
	if redis.call('hlen', KEYS[1]) == 1 then
		redis.call('del', KEYS[1])
	end
	return 0
end
redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
for i = 1, n do
	redis.call('pexpire', KEYS[2] .. ':' .. i, ARGV[1])
end
return 1
