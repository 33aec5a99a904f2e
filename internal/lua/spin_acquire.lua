-- spin_acquire: take or re-enter a spin lock (Redisson RSpinLock), whose
-- record is the reentrant lock's hash. Its waiters poll: nothing
-- registers and nothing is published.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  optional: relock's record of given-up attempts (acquire.lua)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  optional, with KEYS[2]: the attempt's number (acquire.lua)
--
-- Reply: 1 when the caller now holds the lock (hold count + 1, TTL reset
-- to the lease); otherwise {pttl}, the hash's PTTL in milliseconds (-1
-- when it has no expiry). 0 when the attempt is late (acquire.lua):
-- nothing changes.
if late(KEYS[2], ARGV[2], ARGV[3]) then
	return 0
end
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 1
end
return {redis.call('pttl', KEYS[1])}
