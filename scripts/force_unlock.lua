-- force_unlock: delete a lock whoever holds it.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  release channel, redisson_lock__channel:{<name>}
-- KEYS[3]  waiter registry, relock_lock_waiters:{<name>}
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[2]  lease in milliseconds of a hold granted to the next waiter
--
-- Reply: 1 when a lock was deleted (and its waiters told as unlock.lua
-- tells them), 0 when none existed.
if redis.call('del', KEYS[1]) == 1 then
	hand_on(KEYS[1], KEYS[3], KEYS[2], ARGV[1], ARGV[2])
	return 1
end
return 0
