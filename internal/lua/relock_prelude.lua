-- relock_prelude: helpers prepended to every script that tells relock's
-- clients from others.

-- is_relock tells a relock client's owner field from Redisson's: relock's
-- client ids are version-8 UUIDs, Redisson's version 4, and both are
-- followed by ":<owner>".
local function is_relock(field)
	return string.sub(field, 15, 15) == '8' and string.sub(field, 37, 37) == ':'
end

-- late reports that an acquire attempt runs after relock gave it up: the
-- number relock's record of given-up attempts (bury.lua) holds for field
-- is at least attempt, the attempt's own number. A command whose reply
-- was lost can run after anything sent since on another connection, the
-- give-up included: such an attempt must change nothing. A caller that
-- sends no record or no number (a script run outside relock) is never
-- late.
local function late(gone, field, attempt)
	if not gone or not attempt or attempt == '' then
		return false
	end
	local last = redis.call('hget', gone, field)
	return last ~= false and tonumber(last) >= tonumber(attempt)
end
