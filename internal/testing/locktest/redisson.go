package locktest

import "github.com/redis/go-redis/v9"

// The scripts of a Redisson client, played by tests that check relock's
// locks against Redisson's own records; a lock package whose Redisson
// counterpart differs plays its own.

// RedissonAcquire plays Redisson's RLock acquire (RedissonLock
// tryLockInnerAsync): it takes a free lock or re-enters the caller's
// hold, one hold more with the lease reset, or replies the lock's PTTL.
//
// KEYS: lock. ARGV: lease ms, field. Reply: nil when the caller holds the
// lock now; otherwise the PTTL in ms.
var RedissonAcquire = redis.NewScript(`
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
	redis.call('hincrby', KEYS[1], ARGV[2], 1)
	redis.call('pexpire', KEYS[1], ARGV[1])
	return nil
end
return redis.call('pttl', KEYS[1])`)

// RedissonUnlock plays Redisson's RLock unlock (unlockInnerAsync): it
// releases one hold of the field, and the last deletes the hash and
// publishes "0" on the lock's channel.
//
// KEYS: lock, channel (redisson_lock__channel:{<name>}). ARGV: lease ms,
// field. Reply: nil when the field holds nothing; 0 when holds remain
// (the lease reset); 1 when that was the last.
var RedissonUnlock = redis.NewScript(`
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], '0')
return 1`)

// RedissonFairUnlock plays Redisson's RFairLock unlock (RedissonFairLock
// unlockInnerAsync, which RedissonNonReentrantFairLock keeps), written
// here from the facts in docs/redisson-facts.md: it first drops the queue
// heads whose deadline has passed, then releases one hold of the field;
// the last hold deletes the hash and wakes the queue head with "0" on the
// head's own channel, "<lock channel>:<head field>", and so does an
// unlock of a lock already gone. "now" is the client's clock.
//
// KEYS: lock, queue, timeout set, channel prefix (the lock's channel).
// ARGV: lease ms, field, now ms. Reply: nil when the field holds nothing;
// 0 when holds remain (the lease reset); 1 otherwise.
var RedissonFairUnlock = redis.NewScript(`
local now = tonumber(ARGV[3])
while true do
	local head = redis.call('lindex', KEYS[2], 0)
	if not head then break end
	local due = redis.call('zscore', KEYS[3], head)
	if not due or tonumber(due) > now then break end
	redis.call('zrem', KEYS[3], head)
	redis.call('lpop', KEYS[2])
end
local function wake_head()
	local head = redis.call('lindex', KEYS[2], 0)
	if head then
		redis.call('publish', KEYS[4] .. ':' .. head, '0')
	end
end
if redis.call('exists', KEYS[1]) == 0 then
	wake_head()
	return 1
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
	return nil
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) > 0 then
	redis.call('pexpire', KEYS[1], ARGV[1])
	return 0
end
redis.call('del', KEYS[1])
wake_head()
return 1
`)
