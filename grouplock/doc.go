// Package grouplock provides Mutex, which locks many values of one group
// at once, all of them or none, in one script call: Redisson's
// RedissonFasterMultiLock (RedissonClient.getMultiLock(group, values)),
// on the same Redis record.
//
// # Guarantees
//
//   - All or none: an acquire takes every value or changes nothing, in
//     one atomic script, so a waiter never holds part of its set and two
//     Mutexes over overlapping sets cannot deadlock.
//   - Mutual exclusion per value, among relock and Redisson clients
//     alike (with the Redisson clients' codec, Options.Codec), but only
//     while the lease holds: one lease for the whole set, renewed by the
//     client's watchdog in one script call, and the context Lock returned
//     is cancelled with cause relock.ErrLockLost when any value is lost.
//   - Reentrancy follows the context, as for every relock lock: a Lock
//     with the returned context adds a hold to every value. Values shared
//     by sets of one owner count a hold per set, as Redisson counts them.
//   - ctx bounds the wait: a Lock whose ctx ends first returns an error
//     matching relock.ErrNotAcquired and ctx.Err(), and leaves nothing in
//     Redis. Waiters are woken by pub/sub when values are freed, and
//     otherwise sleep until the leases they wait for run out: there is no
//     polling, and no arrival order.
//
// # Names
//
// A Mutex is named by its group as passed to New, which is its Redis
// key: Name returns it, and its errors and the Observer's StartAcquire
// and StartUnlock events name the group so, whatever the set of values.
// The client keeps the holds of each set apart, since an owner may hold
// several sets of one group, under the set's own name
// "<group>[<hash of its values>]", which is no Redis key and which
// nothing shows: the Observer's HoldEnded, leak reports and Close's
// errors name the group too.
//
// Compared with package multilock over one lock per value, a Mutex costs
// one script call however many values it has, where multilock takes its
// members one after another; but all of its values live in one hash, on
// one Redis node, and a release wakes every waiter on the group.
//
// # Redis layout
//
// The group is a Redis hash named after the group. Each held value has
// three fields: "<value>" = "<client id>:<owner>", the holder;
// "<value>:<client id>:<owner>:expire_time", the end of the holder's
// lease in epoch milliseconds; and "<value>:<client id>:<owner>:lock_count",
// its holds. "<value>" is the value's field, Codec.Field: the HighwayHash
// of the value as the Redisson client's codec encodes it, in base64. A
// value is held while its expire_time is ahead of the Redis server's
// clock; the hash's TTL, at least the longest live lease in it, only
// bounds the record: only a hold taken or extended pushes it out. Every
// acquire, renewal and unlock first sweeps 16 of the hash's fields,
// drawn at random (HRANDFIELD; all of a smaller hash): a value whose
// holder's lease ran out (a fixed lease never unlocked, a holder that
// died) loses its three fields, so they do not pile up next to values
// held for long. An unlock after its lease removes its own fields. A release that frees a value publishes "1" on
// "redisson_lock__channel:{<group>}", which wakes every waiter on the
// group, relock's and Redisson's (Redisson's own release publishes "0",
// which wakes one waiter of each client).
//
// relock's scripts read the Redis server's clock; Redisson's clients
// write and compare their own, so keep them within a small part of the
// lease of the server's.
package grouplock
