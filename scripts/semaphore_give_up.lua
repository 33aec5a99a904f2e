-- semaphore_give_up: a relock waiter of a semaphore, or of expirable
-- permits, leaves the registry without its permits (a wait that ended).
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the waiter's registry member
--
-- A waiter woken for permits passes them on: the walk wakes those they
-- can satisfy now. A watcher passes its role on.
--
-- Reply: 1 when the waiter was registered, 0 when not (nothing changes).
local score = redis.call('zscore', KEYS[3], ARGV[2])
if not score then
	return 0
end
drop(ARGV[2])
local count = false
if tonumber(score) < 0 then
	count = redis.call('get', KEYS[1])
end
serve_all(count)
return 1
