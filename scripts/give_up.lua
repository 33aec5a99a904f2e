-- give_up: a reentrant lock's wait ended without the lock.
--
-- KEYS     as in unlock.lua
-- ARGV[1]  owner field, "<client id>:<owner>"
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- The waiter leaves the registry. When the lock is free, a release may
-- have woken this waiter alone as it was leaving: the next one is woken.
--
-- Reply: 1 when the waiter was registered, 0 when not.
local n = redis.call('zrem', KEYS[3], ARGV[1])
if redis.call('exists', KEYS[1]) == 0 then
	wake_next(KEYS[3], KEYS[2], ARGV[2])
end
return n
