// Package inspect reads the state of locks and synchronizers in Redis
// for operators: who holds a lock and how many times, who waits for it,
// its TTL, a read/write lock's mode and readers, a fair lock's queue, a
// fencing counter; a group lock's holders and the values they hold; a
// semaphore's or latch's count and waiters; an expirable semaphore's
// permits with their leases; an election's leader, term, candidates and
// history; the last token package fence's Redis guard recorded. It reads
// the records of relock's types and those Redisson writes, which share
// their layout (docs/wire-layout.md). Which kind a record is, is decided
// in one table, recordRules in kinds.go (and keyRules there for kinds
// kept under derived keys, and for relock's companion keys): a new kind
// is added there. A record's kind is what lasts of it, so it does not
// change with the record's state.
//
// Read takes a plain go-redis client, not a relock.Client: an operator's
// tool needs neither a watchdog nor a subscription. It reads every key of
// one lock in one read-only script, so the view is atomic: no holder
// changes between reading the hash and reading the queue. Every key of a
// lock shares its cluster hash slot, so Read works on a cluster too.
//
// Find (and List, for locks) finds records by name pattern with SCAN,
// never KEYS, on every master of a cluster, a bounded batch per call: it
// neither blocks Redis nor holds the whole key space in memory. Doctor
// reads every record so found and reports what is wrong: old holds and
// waits, leases not renewed, stale fair-queue entries, holders and
// waiters whose client is gone, fair queues left by all of them,
// expired permits, and waits-for cycles across processes
// (docs/doctor.md).
//
// What it tells, and what not:
//
//   - A view is a snapshot: by the time it is printed, the lock may have
//     changed hands.
//   - Owners are shown as Redis has them: "<client id>:<owner>", where
//     the client id is a UUID, version 8 for relock's clients and
//     version 4 for Redisson's (Ident.Library), and the owner is relock's
//     owner number or Redisson's thread id. Which process that is, Redis
//     does not know: match the client id with relock.Client.ID, or with
//     Redisson's connection manager id, in your logs.
//   - Fair-queue deadlines are epoch milliseconds from the clock of the
//     client that wrote them (relock's: the Redis server's); compare them
//     with Lock.ServerTime, not with the local clock.
//   - Redis does not record when a lock or permit was taken: a hold's
//     age is known only from when a Doctor run first saw it
//     (DoctorOptions.Seen), and a waiter's from relock's registry. A
//     spin or non-reentrant lock is a reentrant lock's record, and a
//     semaphore's, an expirable semaphore's and a latch's are all a
//     count (KindCount): Lock.Use tells which only while someone holds
//     permits or waits. A group lock keeps its values as hashes:
//     Lock.NameValues names those the caller knows.
//   - An ACL user running Read needs EVALSHA, EVAL and PUBSUB, and
//     inside the scripts TYPE, PTTL, HGETALL, HEXISTS, LRANGE, ZRANGE,
//     ZCARD, EXISTS, GET, XREVRANGE and TIME, and GET outside them;
//     Find needs SCAN, TYPE, HSCAN and GET (and CLUSTER SLOTS on a
//     cluster); Doctor needs both.
//   - Nothing here changes a lock. To release one whoever holds it, use
//     the lock type's ForceUnlock (or the relock CLI's force-unlock),
//     which also wakes its waiters: deleting the key by hand does not.
package inspect
