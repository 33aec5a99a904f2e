-- inspect_sync: read the state of the synchronizers kept under one name
-- (a semaphore's or a latch's count, an expirable semaphore's permits,
-- relock's semaphore records, an election's leader, term and log),
-- writing nothing, for operators (package inspect). Every key shares the
-- name's hash slot.
--
-- KEYS[1]  the name's own key: a semaphore's or a latch's count string
-- KEYS[2]  permits ZSET, {<name>}:timeout (member: raw permit id, score:
--          expiry in epoch ms)
-- KEYS[3]  relock's semaphore waiters ZSET, relock_semaphore_waiters:{<name>}
-- KEYS[4]  relock's semaphore grants ZSET, relock_semaphore_grants:{<name>}
-- KEYS[5]  relock's semaphore watcher STRING, relock_semaphore_watcher:{<name>}
-- KEYS[6]  election leader HASH, relock_election_leader:{<name>}
-- KEYS[7]  election term counter, relock_election_term:{<name>}
-- KEYS[8]  election change log STREAM, relock_election_log:{<name>}
-- ARGV[1]  the most permits and waiters listed
-- ARGV[2]  the most log entries read, newest first
--
-- Reply: {value, permits, waiters, grants, watcher, leader, term, log}:
-- GET of KEYS[1] when it is a string, else false; ZRANGE WITHSCORES of
-- KEYS[2] and KEYS[3] (the first ARGV[1]); ZCARD of KEYS[4]; EXISTS of
-- KEYS[5]; HGETALL of KEYS[6]; GET of KEYS[7], else false; XREVRANGE of
-- KEYS[8] (ARGV[2] entries), else {}. A key of an unexpected type reads
-- as absent.
local function typ(k) return redis.call('type', k)['ok'] end
local most = tonumber(ARGV[1]) - 1
local value, term, log = false, false, {}
if typ(KEYS[1]) == 'string' then value = redis.call('get', KEYS[1]) end
if typ(KEYS[7]) == 'string' then term = redis.call('get', KEYS[7]) end
if typ(KEYS[8]) == 'stream' then
	log = redis.call('xrevrange', KEYS[8], '+', '-', 'COUNT', tonumber(ARGV[2]))
end
local function zset(k)
	if typ(k) ~= 'zset' then return {} end
	return redis.call('zrange', k, 0, most, 'withscores')
end
local grants = 0
if typ(KEYS[4]) == 'zset' then grants = redis.call('zcard', KEYS[4]) end
local leader = {}
if typ(KEYS[6]) == 'hash' then leader = redis.call('hgetall', KEYS[6]) end
return {
	value,
	zset(KEYS[2]),
	zset(KEYS[3]),
	grants,
	redis.call('exists', KEYS[5]),
	leader,
	term,
	log,
}
