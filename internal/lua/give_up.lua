-- give_up: a reentrant lock's wait ended without the lock.
--
-- KEYS     as in unlock.lua
-- ARGV[1]  owner field, "<client id>:<owner>"
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
-- ARGV[3]  lease in milliseconds of a hold granted to the next waiter
-- ARGV[4]  "1" when the owner holds the lock on its client (another call
--          of the same owner took it), else "0": then a hold of the
--          caller's in the hash is a grant it did not take, and it is
--          passed on
-- ARGV[5]  "1" for a fenced waiter (registered as "f:<owner field>")
--
-- The waiter leaves the registry. When the lock is free, a release may
-- have woken this waiter alone as it was leaving: the next one is told.
--
-- Reply: 1 when the waiter was registered or handed the lock, 0 when not.
local n = redis.call('zrem', KEYS[3], member(ARGV[1], ARGV[5]))
if ARGV[4] == '0' and redis.call('hexists', KEYS[1], ARGV[1]) == 1 then
	redis.call('del', KEYS[1])
	hand_on(KEYS[1], KEYS[3], KEYS[2], ARGV[2], ARGV[3])
	return 1
end
if redis.call('exists', KEYS[1]) == 0 then
	hand_on(KEYS[1], KEYS[3], KEYS[2], ARGV[2], ARGV[3])
end
return n
