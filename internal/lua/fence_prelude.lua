-- fence_prelude: the check every fenced write makes first, prepended to
-- fence_set.lua, fence_hset.lua and fence_xadd.lua (package fence).
--
-- KEYS[1]  the resource's last token, relock_fence:{<resource>}: a
--          string holding a decimal integer, no TTL
-- KEYS[2]  the key written, in KEYS[1]'s hash slot
-- ARGV[1]  the writer's token: a decimal integer >= 0 without leading
--          zeros
--
-- A write goes ahead when ARGV[1] is at least KEYS[1] (or KEYS[1] is
-- absent); then KEYS[1] becomes ARGV[1]. The write comes before the
-- record, so a write that fails (WRONGTYPE) leaves the token as it was.
--
-- Reply of every fenced write: {0, <last token>} when the token is stale,
-- having written nothing; {1, ...} when written.

-- above reports whether decimal string a is a greater integer than b:
-- by length, then digit by digit. Exact over all of int64, where Lua's
-- numbers (doubles) are not, and free of the server's collation locale,
-- which Lua's string comparison follows.
local function above(a, b)
	if #a ~= #b then
		return #a > #b
	end
	for i = 1, #a do
		local x, y = a:byte(i), b:byte(i)
		if x ~= y then
			return x > y
		end
	end
	return false
end

-- newer returns the recorded token when it is above ARGV[1], else nil.
local function newer()
	local last = redis.call('get', KEYS[1])
	if last and above(last, ARGV[1]) then
		return last
	end
	return nil
end
