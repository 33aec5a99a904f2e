-- election_observe: what an observer has not seen yet.
--
-- KEYS[1]  the election's lock hash
-- KEYS[2]  leader hash: value, term, field
-- KEYS[3]  change log, relock_election_log:{<name>} (a stream)
-- ARGV[1]  the ID of the last log entry the observer has seen, or "" for
--          none yet
--
-- Reply, for "": {value, term, id} where value and term are the current
-- leader's (false when there is none, see election_leader.lua) and id is
-- the log's last entry ("0-0" when empty), from which the observer goes
-- on. Otherwise: the log's entries after ARGV[1], oldest first, at most
-- 100, each {id, {"term", term, "value", value}}.
if ARGV[1] ~= '' then
	return redis.call('xrange', KEYS[3], '(' .. ARGV[1], '+', 'COUNT', 100)
end
local last = redis.call('xrevrange', KEYS[3], '+', '-', 'COUNT', 1)
local id = '0-0'
if last[1] then
	id = last[1][1]
end
local leader = redis.call('hmget', KEYS[2], 'value', 'term', 'field')
if not leader[3] or redis.call('hexists', KEYS[1], leader[3]) == 0 then
	return {false, false, id}
end
return {leader[1], leader[2], id}
