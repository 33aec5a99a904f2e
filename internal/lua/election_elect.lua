-- election_elect: make the holder of an election's lock its leader, with
-- a new term.
--
-- KEYS[1]  the election's lock hash, relock_election:{<name>} (a fair lock)
-- KEYS[2]  leader hash, relock_election_leader:{<name>}: value, term, field
-- KEYS[3]  term counter, relock_election_term:{<name>} (never deleted)
-- KEYS[4]  change channel, relock_election_channel:{<name>}
-- KEYS[5]  change log, relock_election_log:{<name>}: a stream of the last
--          1000 leaders and values (term, value), which observers read
-- ARGV[1]  the candidate's lock field, "<client id>:<owner>"
-- ARGV[2]  the candidate's value
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: the new term, or nil when the candidate does not hold the lock
-- (its lease ran out), which leaves everything as it was.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
	return nil
end
local term = redis.call('incr', KEYS[3])
redis.call('hset', KEYS[2], 'value', ARGV[2], 'term', term, 'field', ARGV[1])
redis.call('xadd', KEYS[5], 'MAXLEN', 1000, '*', 'term', term, 'value', ARGV[2])
redis.call(ARGV[3], KEYS[4], term)
return term
