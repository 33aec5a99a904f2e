-- election_resign: end a leadership, before its lock is released.
--
-- KEYS[1]  leader hash: value, term, field
-- KEYS[2]  change channel
-- ARGV[1]  the leader's lock field
-- ARGV[2]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: 1 when the caller was the recorded leader and the record was
-- deleted and the change announced (message "0" would wake one observer
-- only, so the message is the term, never 0); 0 otherwise.
if redis.call('hget', KEYS[1], 'field') ~= ARGV[1] then
	return 0
end
local term = redis.call('hget', KEYS[1], 'term')
redis.call('del', KEYS[1])
redis.call(ARGV[2], KEYS[2], term)
return 1
