-- renew: extend the lease of a lock the caller still holds (watchdog).
--
-- KEYS[1]  lock hash, the user's lock name
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
--
-- Reply: 1 when the field exists and the TTL was reset to the lease; 0 when
-- the lock is gone or held by another owner, which the watchdog reports as
-- a lost lease.
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 1
end
return 0
