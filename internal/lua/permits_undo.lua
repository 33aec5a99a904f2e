-- permits_undo: give back a permit that an acquire may have taken for a
-- caller that was told it failed (the acquire's reply was lost, or the
-- replicas did not confirm it), and record its id as given up, so that
-- the acquire takes nothing should it run later.
--
-- KEYS     see permits_prelude.lua (KEYS[7] too)
-- ARGV[1]  publish command
-- ARGV[2]  the permit's id: 16 raw bytes
-- ARGV[3]  how long the record lasts, in milliseconds: at least the lease
--          the acquire sets, so that one running after the record is gone
--          holds its permit no longer than that lease
--
-- A command whose reply was lost may still run on the server, after
-- anything sent since on another connection: Redis orders nothing across
-- connections. Recording the id and giving the permit back in one script
-- leaves nothing in either order: an acquire that ran before it has its
-- permit given back here, and one that runs after it finds the id in
-- KEYS[7] and takes nothing (permits_acquire.lua). Records whose time has
-- come are trimmed first, and the record's TTL covers its latest member,
-- so that it goes once nobody gives up on the semaphore.
--
-- Reply: as permits_release.lua's.
local now = now_ms()
local keep = tonumber(ARGV[3])
redis.call('zremrangebyscore', KEYS[7], 0, now)
redis.call('zadd', KEYS[7], now + keep, ARGV[2])
if redis.call('pttl', KEYS[7]) < keep then
	redis.call('pexpire', KEYS[7], keep)
end
return release(ARGV[2])
