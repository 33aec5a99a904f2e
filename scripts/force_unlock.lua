-- force_unlock: delete a lock whoever holds it.
--
-- KEYS[1]  lock hash, the user's lock name
-- KEYS[2]  release channel, redisson_lock__channel:{<name>}
-- KEYS[3]  waiter registry, relock_lock_waiters:{<name>}
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: 1 when a lock was deleted (and its waiters woken as unlock.lua
-- wakes them), 0 when none existed.
if redis.call('del', KEYS[1]) == 1 then
	redis.call(ARGV[1], KEYS[2], '0')
	wake_next(KEYS[3], KEYS[2], ARGV[1])
	return 1
end
return 0
