-- semaphore_give_up: a relock waiter of a semaphore, or of expirable
-- permits, leaves the registry without its permits (a wait that ended).
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the waiter's registry member
--
-- An expirable permits' waiter passes KEYS[1] to KEYS[5] only: it is
-- never handed permits.
--
-- A waiter woken for permits passes them on: the walk serves those they
-- can satisfy now. A watcher passes its role on. A semaphore's waiter
-- handed permits it has not taken (the message came too late) returns
-- them, as a release does.
--
-- Reply: 1 when the waiter was registered, 2 when it returned permits
-- handed to it, 0 otherwise (nothing changes).
grants = KEYS[6]
local score = redis.call('zscore', KEYS[3], ARGV[2])
if not score then
	if grants and take_grant(ARGV[2]) then
		offer(wants_string(ARGV[2]))
		return 2
	end
	return 0
end
drop(ARGV[2])
local count = false
if tonumber(score) < 0 then
	count = redis.call('get', KEYS[1])
end
serve_all(count)
return 1
