-- relock_prelude: helpers prepended to every script that tells relock's
-- clients from others.

-- is_relock tells a relock client's owner field from Redisson's: relock's
-- client ids are version-8 UUIDs, Redisson's version 4, and both are
-- followed by ":<owner>".
local function is_relock(field)
	return string.sub(field, 15, 15) == '8' and string.sub(field, 37, 37) == ':'
end
