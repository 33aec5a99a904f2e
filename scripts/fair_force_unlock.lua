-- fair_force_unlock: delete a fair lock whoever holds it. KEYS as in
-- fair_prelude.lua.
--
-- ARGV[1]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: 1 when a lock was deleted (and the queue head woken), 0 when
-- none existed.
drop_stale(now_ms())
if redis.call('del', KEYS[1]) == 1 then
	wake_head(ARGV[1])
	return 1
end
return 0
