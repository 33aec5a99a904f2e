-- semaphore_undo: undo a relock acquire of a semaphore whose reply its
-- client never read (see semaphore_prelude.lua, "The attempts"): the
-- acquire may have run, or may still run, late.
--
-- KEYS     see semaphore_prelude.lua (KEYS[7] required)
-- ARGV[1]  publish command
-- ARGV[2]  the acquire's registry member, "<client id>:<tag>:<permits>"
-- ARGV[3]  the acquire's number (its ARGV[7])
-- ARGV[4]  how long a record lasts, in ms (its ARGV[8])
--
-- A take the acquire recorded is given back, as a release gives permits
-- back (the waiters they can satisfy are served); a grant it took is
-- recorded again, as the walk that handed it left it: the grant's message
-- may still reach the waiter, which then holds the permits, and
-- otherwise its next attempt takes them or its give-up returns them.
-- Otherwise the attempt is recorded as given up, and takes and registers
-- nothing when it runs.
-- A registration the acquire made stays: the caller's wait may go on, and
-- its give-up (semaphore_give_up.lua) removes it. Undoing twice gives
-- nothing back twice.
--
-- Reply: 2 when the acquire had taken permits, which went back; 3 when
-- it had taken a grant, recorded again; 1 otherwise.
grants = KEYS[6]
attempts = KEYS[7]
keep_attempts(ARGV[4])
local attempt = ARGV[3] .. ':' .. ARGV[2]
if redis.call('zrem', attempts, 't:' .. attempt) == 1 then
	offer(wants_string(ARGV[2]))
	return 2
end
if redis.call('zrem', attempts, 'h:' .. attempt) == 1 then
	record_grant(ARGV[2])
	return 3
end
note_attempt('g:' .. attempt)
return 1
