-- permits_update: move a held permit's expiry to now + lease: Redisson's
-- updateLeaseTime, and the watchdog's renewal.
--
-- KEYS     see permits_prelude.lua
-- ARGV[1]  publish command
-- ARGV[2]  the permit's id: 16 raw bytes
-- ARGV[3]  the new lease in milliseconds
--
-- Expired permits are reclaimed first (and the waiters they can satisfy
-- woken): a permit whose expiry has come is not brought back.
--
-- Reply: 1 when the permit is held (its score moved), 0 when it is not,
-- which the watchdog reports as a lost permit.
serve_all(reclaim())
if redis.call('zscore', KEYS[6], ARGV[2]) then
	redis.call('zadd', KEYS[6], now_ms() + tonumber(ARGV[3]), ARGV[2])
	return 1
end
return 0
