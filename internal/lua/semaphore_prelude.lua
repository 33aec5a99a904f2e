-- semaphore_prelude: relock's registry of a semaphore's waiters, prepended
-- to the semaphore's and the expirable permits' scripts that take, add or
-- wait for permits (Redisson's RSemaphore and RPermitExpirableSemaphore
-- share the count and the channel).
--
-- KEYS[1]  count STRING, the semaphore's name: the available permits
-- KEYS[2]  shared channel, redisson_sc:{<name>}, where Redisson's waiters
--          listen, and relock's watcher (below)
-- KEYS[3]  registry ZSET, relock_semaphore_waiters:{<name>}
-- KEYS[4]  watcher STRING, relock_semaphore_watcher:{<name>}: the
--          registry member of the waiter that listens on KEYS[2]
-- KEYS[5]  waiters' channel prefix, relock_sc:{<name>}: a relock client's
--          waiters listen on KEYS[5] .. ':' .. <client id>
-- KEYS[6]  grants ZSET, relock_semaphore_grants:{<name>}, in the
--          semaphore's scripts only (see "The grants" below); an
--          expirable permits' script has its permits ZSET there, and
--          never grants
-- KEYS[7]  attempts ZSET, relock_semaphore_attempts:{<name>}, in the
--          semaphore's scripts only (see "The attempts" below)
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- The registry. A relock waiter that finds too few permits while it
-- listens on its client's channel registers: member
-- "<client id>:<tag>:<permits wanted>", score the server's time in
-- microseconds (exact in a double), positive: asleep, the first
-- registered first served. Whenever permits are free that no woken waiter
-- claims, a script walks the registry from its head and hands each
-- sleeping waiter whose wants fit in what is left its permits (see "The
-- grants" below), passing over those that want more; an expirable
-- permits' waiter it wakes instead, with "<tag>:0" on its client's
-- channel; a woken waiter's score becomes -(the microsecond by which it must try again),
-- which puts it ahead of every sleeping one, and what it wants is
-- reserved for it until then. Everyone else, newcomers included, takes
-- only what the waiters ahead of it do not claim, so relock's waiters are
-- served in their order (Redisson's clients do not look at the registry).
-- A waiter leaves the registry when it takes its permits or gives up; one
-- woken that finds too few (a Redisson client took them) goes back to
-- sleep in its place, its registration time, which it passes back. A
-- waiter whose client no longer listens (PUBLISH reaches nobody) is
-- dropped when a walk meets it, and one woken that has not tried again by
-- its deadline (its process died) by the next script that meets it; a
-- registered waiter tries again at least every sleep_bound, which renews
-- the registry's TTL, so the registry of waiters that all died expires.
--
-- The watcher. Redisson's releases publish on the shared channel only.
-- One registered waiter, named by KEYS[4], also listens there, and a
-- message there wakes it: its attempt walks the registry, waking the
-- waiters the new permits can satisfy. Every relock script that publishes
-- there first tells the watcher's client "=<count>" on its channel: the
-- client's hub then does not wake the watcher for the message that
-- follows (pubsub.WakeTagged), whose script served the waiters itself.
-- A relock release thus serves the relock waiters it can satisfy and
-- wakes no other, and a Redisson release wakes one relock waiter, which
-- serves the rest. Redisson's waiters take what relock's leave: a relock
-- script whose grants took every permit publishes nothing there.
-- When the watcher leaves, the most recently registered waiter takes the
-- role ("<tag>:w"); the first waiter to register when nobody holds it
-- takes it itself.
--
-- The grants. A semaphore's waiter (its tag starts with "g"; not an
-- expirable permits' waiter, whose permit needs an id of its own) is not
-- woken to try again but handed its permits: a walk that meets it with
-- enough left takes them from the count for it, moves its member from the
-- registry to the grants ZSET (score: the grant's time in microseconds)
-- and tells it "<tag>:g". A release thus costs the waiter no second
-- attempt. The record stands for a waiter that has not read the message:
-- its next attempt (a reconnect wakes it) finds the grant and takes it,
-- and its give-up returns the permits. A waiter that read it has its
-- client acknowledge it, with its next acquire or release on the
-- semaphore (the acknowledgement ARGV) or on its own within a quarter of
-- a second, which removes the record.
--
-- A grant is a lease on its acknowledgement: one not acknowledged within
-- grant_keep is revoked, its permits returned to the count, by the next
-- script that looks (one that grants, adds permits, or finds too few and
-- then sleeps no longer than until the oldest grant's revocation), for
-- the waiter's process may be gone while its subscription looks alive (a
-- machine that crashed, a partition: Redis notices a dead connection
-- only after minutes). An acknowledgement that comes after all (the
-- holder was cut off from Redis for that long) takes the permits back
-- from the count: from the revocation until then, the semaphore may have
-- let more holders in than it has permits, as a lock whose holder is cut
-- off from Redis past its lease has two holders. (An acknowledgement later
-- than tombstone_keep is not counted.)

-- The attempts. Redis orders nothing across connections: an acquire
-- whose reply a client never read (its connection dropped) may run after
-- anything the client sent since on another one. A semaphore's permits
-- have no owner, so each acquire of relock's carries a number (ARGV),
-- and one that takes permits records "t:<number>:<member>" here, scored
-- with the server's time in microseconds until which the record lasts,
-- attempts_keep from its write ("h:..." when it took the permits
-- a walk had handed it, a grant); its client removes the record with its
-- next acquire or release on the semaphore (the acknowledgement ARGV,
-- which names both "t:..."), or the record goes after attempts_keep. A
-- client that lost an acquire's reply undoes it (semaphore_undo.lua): a
-- take recorded is given back, a grant taken is recorded again (its
-- message "<tag>:g" may still reach the waiter, which then holds its
-- permits), and otherwise the attempt is recorded as given up,
-- "g:<number>:<member>", so that it takes and registers nothing when it
-- runs late. Either way nothing of it outlives the undo.

-- A woken waiter's time to try again, in microseconds.
local wake_grace = 5000000
-- The longest a registered waiter sleeps before it tries again, in ms.
local sleep_bound = 30000
-- The registry's and the watcher's TTL, in ms, renewed by attempts.
local registry_ttl = sleep_bound + 10000
-- The most registry entries one walk looks at, and a page of them.
local walk_limit = 100
local walk_page = 4

-- How long a grant waits for its acknowledgement before it is revoked,
-- in microseconds: far longer than a client takes to acknowledge.
local grant_keep = 10000000
-- The most revocations one script makes.
local revoke_limit = 100
-- How long a revoked grant's tombstone waits for a late acknowledgement,
-- in microseconds.
local tombstone_keep = 3600000000

-- How long the attempts' records last, in microseconds: the client's
-- lease (its watchdog timeout, an ARGV of the scripts that write them),
-- as relock's record of a lock's given-up attempts lasts a lease. An undo
-- that runs later finds no take to give back, and an acquire that runs
-- later after its undo takes its permits.
local attempts_keep = 30000000

-- keep_attempts sets attempts_keep from ms, a script argument in
-- milliseconds.
local function keep_attempts(ms)
	attempts_keep = tonumber(ms) * 1000
end

-- vacant: the watcher left in this script, and none was appointed yet.
local vacant = false

-- grants: the grants ZSET, set by the semaphore's scripts (KEYS[6]); nil
-- in the expirable permits' scripts, whose walks wake instead.
local grants = nil
-- attempts: the attempts ZSET, set by the semaphore's acquires and
-- undos (KEYS[7] when given); nil elsewhere.
local attempts = nil
-- granted: this script recorded a grant (the TTL is set once a script).
local granted = false
-- revoked: this script revoked the grants due (once a script).
local revoked = false
-- taken: permits this script's walks handed to waiters (and its caller
-- took) that are not yet taken from the count, a number of at most
-- 2^53 (take_pending writes them, in one call with what the script adds).
local taken = 0
-- oldest_grant: the oldest grant's time, when revoke found nothing due
-- and no tombstone (nil: unknown).
local oldest_grant = nil
-- count_exists: offer found the count's key (a write of no net change
-- to it can be left out).
local count_exists = false

-- now_us is the server's time in microseconds, read once a script, when
-- first needed.
local now_cache
local function now_us()
	if not now_cache then
		local t = redis.call('time')
		now_cache = tonumber(t[1]) * 1000000 + tonumber(t[2])
	end
	return now_cache
end

-- wants_string is what registry member m wants, its decimal string.
local function wants_string(m)
	return string.match(m, ':(%d+)$')
end

-- wants is what registry member m wants.
local function wants(m)
	return tonumber(wants_string(m))
end

-- add_taken counts w permits (a number; ws, its decimal string) as taken
-- from the count, writing them at once when the sum would pass 2^53,
-- beyond which a Lua number is not exact.
local function add_taken(w, ws)
	if taken + w > 9007199254740992 then
		redis.call('decrby', KEYS[1], ws)
	else
		taken = taken + w
	end
end

-- take_pending writes to the count add (the script's own change, a
-- decimal string of at most 2^53 in magnitude, or nil) less what
-- add_taken counted, in one INCRBY or DECRBY, or none when the two
-- cancel out on a count that exists (a release whose permits all went to
-- waiters). INCRBY creates an absent count, as the release it stands for
-- would.
local function take_pending(add)
	if taken == 0 then
		if add then
			redis.call('incrby', KEYS[1], add)
		end
		return
	end
	if add then
		local net = tonumber(add) - taken
		if net ~= 0 or not count_exists then
			redis.call('incrby', KEYS[1], string.format('%d', net))
		end
	else
		redis.call('decrby', KEYS[1], string.format('%d', taken))
	end
	taken = 0
end

-- grantable reports whether the walk hands member m its permits: a
-- semaphore's waiter, in a semaphore's script.
local function grantable(m)
	return grants ~= nil and string.match(m, '^[^:]+:g') ~= nil
end

-- channel_of is the channel of member m's client.
local function channel_of(m)
	return KEYS[5] .. ':' .. string.match(m, '^[^:]+')
end

-- tell publishes "<tag>:<note>" to member m's waiter, and reports whether
-- its client listens.
local function tell(m, note)
	local tag = string.match(m, '^[^:]+:([^:]+):')
	return redis.call(ARGV[1], channel_of(m), tag .. ':' .. note) > 0
end

-- drop removes member m from the registry; if it was the watcher, the
-- role is vacant.
local function drop(m)
	redis.call('zrem', KEYS[3], m)
	if redis.call('get', KEYS[4]) == m then
		redis.call('del', KEYS[4])
		vacant = true
	end
end

-- appoint gives the vacant watcher's role to the most recently registered
-- waiter whose client listens, dropping those whose clients do not.
local function appoint()
	while true do
		local m = redis.call('zrange', KEYS[3], -1, -1)[1]
		if not m then
			return
		end
		if tell(m, 'w') then
			redis.call('set', KEYS[4], m, 'px', registry_ttl)
			return
		end
		redis.call('zrem', KEYS[3], m)
	end
end

-- announce publishes payload on the shared channel, right after the echo
-- mark "=<payload>" to the watcher's client. A watcher whose client no
-- longer listens is dropped; with none, the role is vacant.
local function announce(payload)
	local w = redis.call('get', KEYS[4])
	if not w then
		vacant = true
	elseif redis.call(ARGV[1], channel_of(w), '=' .. payload) == 0 then
		redis.call('zrem', KEYS[3], w)
		redis.call('del', KEYS[4])
		vacant = true
	end
	redis.call(ARGV[1], KEYS[2], payload)
end

-- revoke returns to the count the permits of grants not acknowledged
-- within grant_keep (see "The grants"), once a script, and reports
-- whether it returned any. A revoked grant's record stays as a tombstone,
-- "r:<member>" scored -(the revocation's time), so that a late
-- acknowledgement takes the permits back once, and goes after
-- tombstone_keep.
local function revoke()
	if revoked or not grants then
		return false
	end
	revoked = true
	-- The lowest score: a tombstone when negative, else the oldest grant.
	local lowest = redis.call('zrange', grants, 0, 0, 'withscores')
	if #lowest == 0 then
		return false
	end
	local now = now_us()
	if tonumber(lowest[2]) < 0 then
		redis.call('zremrangebyscore', grants, '(' .. (tombstone_keep - now), '(0')
	elseif tonumber(lowest[2]) > now - grant_keep then
		oldest_grant = tonumber(lowest[2])
		return false
	end
	local due = redis.call('zrangebyscore', grants, 0, now - grant_keep, 'limit', 0, revoke_limit)
	for _, m in ipairs(due) do
		redis.call('zrem', grants, m)
		redis.call('zadd', grants, -now, 'r:' .. m)
		redis.call('incrby', KEYS[1], wants_string(m))
	end
	return #due > 0
end

-- record_grant records a grant to member m. The grants live as long as
-- the count, a record must outlast everyone's silence until a script
-- revokes it: their TTL is the count's (semaphore_add.lua, which drops
-- the count's TTL, drops theirs).
local function record_grant(m)
	redis.call('zadd', grants, now_us(), m)
	if not granted then
		granted = true
		local ttl = redis.call('pttl', KEYS[1])
		if ttl > 0 then
			redis.call('pexpire', grants, ttl)
		end
	end
end

-- acknowledge removes the grant records of list, members separated by
-- ",", whose waiters took their permits; a grant revoked meanwhile has
-- its permits taken back from the count. Entries "t:..." of list are
-- takes whose replies the client read: their records go (see "The
-- attempts"). Acknowledging twice changes nothing more.
local function acknowledge(list)
	if not grants or not list or list == '' then
		return
	end
	for m in string.gmatch(list, '[^,]+') do
		if string.sub(m, 1, 2) == 't:' then
			if attempts then
				redis.call('zrem', attempts, m, 'h' .. string.sub(m, 2))
			end
		elseif redis.call('zrem', grants, m) == 0 and redis.call('zrem', grants, 'r:' .. m) == 1 then
			redis.call('decrby', KEYS[1], wants_string(m))
		end
	end
end

-- note_attempt records entry, "t:..." or "g:..." (see "The attempts"),
-- for attempts_keep, first dropping the records whose time has passed.
-- Each record is scored with the server's time until which it lasts, and
-- the key lasts as long as the record that lasts longest, so that a
-- client with a shorter lease neither drops nor cuts short the records
-- of one with a longer lease.
local function note_attempt(entry)
	local now = now_us()
	redis.call('zremrangebyscore', attempts, '-inf', '(' .. string.format('%.0f', now))
	redis.call('zadd', attempts, now + attempts_keep, entry)
	local last = tonumber(redis.call('zrange', attempts, -1, -1, 'WITHSCORES')[2])
	redis.call('pexpire', attempts, math.ceil((last - now) / 1000))
end

-- take_grant removes member m's grant record, and reports whether it was
-- a grant not revoked (the caller takes its permits).
local function take_grant(m)
	if redis.call('zrem', grants, m) == 1 then
		return true
	end
	redis.call('zrem', grants, 'r:' .. m)
	return false
end

-- next_revocation is when the oldest grant is revoked, in server
-- microseconds; nil when there is none.
local function next_revocation()
	if not grants then
		return nil
	end
	if oldest_grant then
		return oldest_grant + grant_keep
	end
	local oldest = redis.call('zrangebyscore', grants, 0, '+inf', 'withscores', 'limit', 0, 1)
	if #oldest == 0 then
		return nil
	end
	return tonumber(oldest[2]) + grant_keep
end

-- serve walks the registry with left permits available (a number): woken
-- waiters keep theirs until their deadline, and sleeping ones whose wants
-- fit in what remains are handed them (grantable) or woken. me, when not nil, is
-- the caller's member, registered with score or not at all (nil), who
-- wants want: it is decided in its place in the walk (a newcomer's is
-- last), and takes when its wants fit. A woken caller is decided before
-- (its score is negative): pass its reservation in left already.
--
-- Returns what is left, the earliest deadline of a woken waiter (nil for
-- none), and whether the caller takes.
local function serve(left, me, score, want)
	local first, mine = nil, false
	local pending = me ~= nil and not (score and score < 0)
	-- The walk ends when nothing is left to give. Ranks shift under it
	-- only by the entries it drops (a woken waiter moves ahead of those
	-- not yet seen), so the next page starts that many ranks earlier.
	local seen, offset = 0, 0
	while left >= 1 and seen < walk_limit do
		local page = redis.call('zrange', KEYS[3], offset, offset + walk_page - 1, 'WITHSCORES')
		if #page == 0 then
			break
		end
		local dropped = 0
		for i = 1, #page, 2 do
			if left < 1 then
				break
			end
			local m, s = page[i], tonumber(page[i + 1])
			seen = seen + 1
			if m == me then
				-- decided in its place below, or before the walk
			elseif s < 0 and -s <= now_us() then
				drop(m)
				dropped = dropped + 1
			elseif s < 0 then
				left = left - wants(m)
				if not first or -s < first then
					first = -s
				end
			else
				if pending and score and s > score then
					pending = false
					if want <= left then
						mine, left = true, left - want
					end
				end
				local w = wants(m)
				if w <= left and grantable(m) then
					-- handed its permits: it leaves the registry
					if tell(m, 'g') then
						add_taken(w, wants_string(m))
						record_grant(m)
						left = left - w
					end
					drop(m)
					dropped = dropped + 1
				elseif w <= left then
					if tell(m, '0') then
						local deadline = now_us() + wake_grace
						redis.call('zadd', KEYS[3], -deadline, m)
						left = left - w
						if not first or deadline < first then
							first = deadline
						end
					else
						drop(m)
						dropped = dropped + 1
					end
				end
			end
		end
		offset = offset + #page / 2 - dropped
	end
	if pending and want <= left then
		mine, left = true, left - want
	end
	return left, first, mine
end

-- serve_all is serve for a script that adds permits: count (the key's
-- string or a number, false or nil for none) are available; the count
-- is then written once, with add (see take_pending), and the watcher's
-- role is filled if vacant. It returns what serve left (nil without a
-- count).
local function serve_all(count, add)
	local left = nil
	if count then
		left = serve(tonumber(count))
	end
	take_pending(add)
	if vacant then
		appoint()
	end
	return left
end

-- offer adds add permits (a decimal string of at most 2^53 in
-- magnitude, nil for none) to the count for a semaphore's script (which
-- sets grants), handing them, and any the count had, to the waiters they
-- satisfy first (after revoking the grants due), all in one write to the
-- count. The count is then published on the shared channel for
-- Redisson's waiters and relock's watcher, as Redisson's scripts publish
-- theirs, unless grants took every permit (a count of none tells a
-- Redisson waiter nothing).
local function offer(add)
	revoke()
	local raw = redis.call('get', KEYS[1])
	count_exists = raw ~= false
	local count = tonumber(raw or '0')
	if add then
		count = count + tonumber(add)
	end
	local rest = serve_all(count, add)
	if granted and (not rest or rest < 1) then
		return
	end
	local left = redis.call('get', KEYS[1])
	if not granted or tonumber(left) > 0 then
		announce(left)
	end
end

-- wait_ms is how long a waiter that did not take its permits sleeps
-- before it tries again: sleep_bound, or until the earliest deadline of a
-- woken waiter ahead of it when only reservations stood in its way (that
-- waiter's process may have died); and no later than the oldest grant's
-- revocation, which may return permits.
local function wait_ms(blocked, first)
	local ms = sleep_bound
	if blocked and first then
		ms = math.min(ms, math.floor((first - now_us()) / 1000) + 1)
	end
	local revocation = next_revocation()
	if revocation then
		ms = math.max(1, math.min(ms, math.floor((revocation - now_us()) / 1000) + 1))
	end
	return ms
end

-- sleep registers the caller, member me with score (nil: not
-- registered), after an attempt that did not take its permits; reg is
-- the registration time it passes back. It returns the caller's score
-- and 1 when the caller is the watcher (taking the role when vacant).
local function sleep(me, score, reg)
	if not score then
		score = now_us()
		redis.call('zadd', KEYS[3], score, me)
	elseif score < 0 then
		score = tonumber(reg)
		if not score or score <= 0 then
			score = now_us()
		end
		redis.call('zadd', KEYS[3], score, me)
	end
	redis.call('pexpire', KEYS[3], registry_ttl)
	local w = redis.call('get', KEYS[4])
	if w and w ~= me then
		return score, 0
	end
	redis.call('set', KEYS[4], me, 'px', registry_ttl)
	vacant = false
	return score, 1
end
