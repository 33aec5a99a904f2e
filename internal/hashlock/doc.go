// Package hashlock is the machinery shared by the lock types whose record
// is Redisson's lock hash (a field "<client id>:<owner>" counting holds,
// the hash's TTL as the lease) or a hash of the same shape: the
// reentrant, fair, non-reentrant and spin locks, and the read/write and
// group locks. A lock package supplies its scripts as Ops; hashlock runs
// the acquire loop, keeps the local hold records, and answers the state
// queries.
package hashlock
