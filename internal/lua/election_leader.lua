-- election_leader: read an election's leader.
--
-- KEYS[1]  the election's lock hash
-- KEYS[2]  leader hash: value, term, field
--
-- Reply: {value, term} when the recorded leader still holds the lock;
-- nil when there is no leader (none was elected, it resigned, or its
-- lease ran out and no successor has been elected yet).
local leader = redis.call('hmget', KEYS[2], 'value', 'term', 'field')
if not leader[3] or redis.call('hexists', KEYS[1], leader[3]) == 0 then
	return nil
end
return {leader[1], leader[2]}
