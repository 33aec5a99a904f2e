-- semaphore_acquire: take permits from a semaphore (Redisson RSemaphore
-- layout), all or none, in turn among relock's waiters.
--
-- KEYS     see semaphore_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  permits wanted, a positive integer of at most 2^53
--          (relock.MaxCount)
-- ARGV[3]  the caller's registry member, "<client id>:<tag>:<ARGV[2]>"
-- ARGV[4]  "1" when the caller listens on its client's channel, and
--          registers when it does not take its permits; "0" otherwise (a
--          single try, or a first attempt before listening)
-- ARGV[5]  the caller's registration time, as a reply gave it ("0" for
--          none, "-1" for unknown: a reply was lost): where a woken
--          caller that finds too few goes back
-- ARGV[6]  grants the caller's client acknowledges, members separated by
--          "," ("" for none), and takes whose replies it read ("t:...")
-- ARGV[7]  optional, with KEYS[7]: the attempt's number, unique on the
--          caller's client (see the prelude's "The attempts")
-- ARGV[8]  with ARGV[7]: how long its record lasts, in ms (the client's
--          lease)
--
-- A registered caller whose grant is recorded (it did not read the
-- message) takes the permits handed to it. Grants due for revocation are
-- revoked first (see the prelude's "The grants").
--
-- The caller takes its permits when the count (GET) is at least ARGV[2]
-- and, unless a walk woke it for them (its score is negative), when they
-- fit in what the registered waiters ahead of it do not claim (see the
-- prelude's serve, which wakes those it can on its way). Whatever the
-- reservations, the permits are taken only when the count is at least
-- ARGV[2], which is exact although Lua numbers are doubles: ARGV[2] is at
-- most 2^53, so tonumber keeps it, and rounding is monotonic and keeps
-- 2^53, so a count at least ARGV[2] still compares at least ARGV[2] when
-- tonumber rounds it; a count below ARGV[2] is below 2^53 and not rounded
-- at all. DECRBY then subtracts the exact string, keeping the key's TTL.
--
-- Reply: 1 when the permits were taken (the caller left the registry);
-- otherwise {ms, watcher, registration}: how long to sleep at most before
-- trying again, 1 when the caller is the watcher (it must listen on the
-- shared channel too), and its registration time (0 when not registered).
-- An attempt its client gave up (the prelude's "The attempts") changes
-- nothing and replies 0, which nobody reads.
grants = KEYS[6]
attempts = ARGV[7] and KEYS[7]
local attempt = attempts and (ARGV[7] .. ':' .. ARGV[3])
if attempt then
	keep_attempts(ARGV[8])
end
if attempt and redis.call('zscore', attempts, 'g:' .. attempt) then
	return 0
end
acknowledge(ARGV[6])
if ARGV[5] ~= '0' and take_grant(ARGV[3]) then
	if attempt then
		note_attempt('h:' .. attempt)
	end
	return 1
end
revoke()
local have = tonumber(redis.call('get', KEYS[1]) or '0')
local want = tonumber(ARGV[2])
-- A caller that never registered (ARGV[5] "0") is not looked up.
local score = ARGV[5] ~= '0' and redis.call('zscore', KEYS[3], ARGV[3])
score = score and tonumber(score)
local left, woken = have, false
if score and score < 0 and have >= want then
	woken, left = true, have - want
end
local _, first, mine = serve(left, ARGV[3], score, want)
if woken or mine then
	add_taken(want, ARGV[2])
end
take_pending(nil)
if woken or mine then
	if score then
		drop(ARGV[3])
	end
	if vacant then
		appoint()
	end
	if attempt then
		note_attempt('t:' .. attempt)
	end
	return 1
end
local watcher = 0
if ARGV[4] == '1' then
	score, watcher = sleep(ARGV[3], score, ARGV[5])
end
if vacant then
	appoint()
end
return {wait_ms(have >= want, first), watcher, score or 0}
