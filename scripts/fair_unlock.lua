-- fair_unlock: release one hold of a fair lock. KEYS as in
-- fair_prelude.lua.
--
-- ARGV[1]  lease in milliseconds, applied again while holds remain
-- ARGV[2]  owner field, "<client id>:<owner>"
-- ARGV[3]  publish command: PUBLISH, or SPUBLISH for sharded pub/sub
--
-- Reply: nil when the caller holds no hold (a free lock still wakes the
-- queue head, in case its wake-up was lost); 0 when holds remain; 1 when
-- this was the last hold: the hash is deleted and "0" is published to the
-- queue head only.
drop_stale(now_ms())
if redis.call('exists', KEYS[1]) == 0 then
	wake_head(ARGV[3])
	return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
wake_head(ARGV[3])
return 1
