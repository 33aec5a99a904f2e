-- election_proclaim: change the leader's value, keeping its term.
--
-- KEYS[1]  the election's lock hash
-- KEYS[2]  leader hash: value, term, field
-- KEYS[3]  change channel
-- KEYS[4]  change log (see election_elect.lua)
-- ARGV[1]  the leader's lock field
-- ARGV[2]  the new value
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: 1 when the caller is the leader and holds the lock, and the
-- value was set and announced; 0 otherwise, changing nothing.
if redis.call('hget', KEYS[2], 'field') ~= ARGV[1] or redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return 0
end
redis.call('hset', KEYS[2], 'value', ARGV[2])
local term = redis.call('hget', KEYS[2], 'term')
redis.call('xadd', KEYS[4], 'MAXLEN', 1000, '*', 'term', term, 'value', ARGV[2])
redis.call(ARGV[3], KEYS[3], term)
return 1
