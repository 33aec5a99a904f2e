// Package fence rejects the writes of lock holders that no longer hold
// the lock: it is the storage side of fencing tokens.
//
// A lock's exclusion lasts only as long as its lease. A holder that is
// paused (a long GC, a stalled VM, a slow network) after it last checked
// its context can wake up after its lease ran out and another holder took
// the lock, and write over the newer holder's work: no lock service can
// stop that, since the late write no longer goes through it. What can
// stop it is the storage: each acquire of a fenced lock draws a token
// from a counter that only grows (reentrant.Options.Fencing and
// Mutex.Token, Redisson's RFencedLock; election.TermOf for a leadership),
// and a store that remembers the highest token it has seen for a
// resource and refuses writes with a lower one turns the paused holder's
// write into an error. This package is that store-side check, for Redis
// and for SQL databases.
//
// # Guarantees
//
//   - A write with a token lower than one already recorded for its
//     resource is refused with an error matching ErrStale (a *StaleError
//     names the newer token) and writes nothing. A write with the same
//     token or a higher one goes ahead and records its token, atomically
//     with the write: no write with a lower token can slip in between.
//   - Equal tokens are accepted: one holder may write many times. A
//     re-entry of a fenced lock draws a new token, so a holder should
//     take its token (Mutex.Token) after its latest Lock and write with
//     that one.
//   - No clock is read: order rests on the tokens alone.
//
// What it does not do: it guards only the writes that go through it.
// Every writer of a resource must pass its token, or a writer that does
// not can still overwrite a newer one. Tokens of one resource must come
// from one counter: one lock name (relock's and Redisson's fenced locks
// of a name share theirs) or one election. A token recorded for a
// resource stays recorded: the record is never expired or deleted, as
// the lock's counter is never reset.
//
// # Redis
//
// Redis's guard (NewRedis) runs each write in a script that reads the
// resource's last token, makes the write, and records the token. The last
// token lives at relock_fence:{<resource>} (relock_fence:<resource> when
// the resource has a hash tag of its own), a plain string without TTL. A
// script's keys must lie in one hash slot on Redis Cluster, so every key
// written for a resource must carry the resource's hash tag: for the
// resource "orders:42", keys such as "{orders:42}:total"; for
// "orders:{42}", keys such as "items:{42}". The guard refuses other keys
// with an error matching relock.ErrInvalidArgument, on a single server
// too, so that code moving to a cluster has nothing left to find out.
//
// # SQL
//
// In a SQL database the last tokens live in a table, relock_fence
// (Schema creates it). Advance records a token inside the caller's
// transaction with a conditional upsert, refused when the recorded token
// is higher; its row stays locked until the transaction ends, so the
// transaction's other writes commit only while its token is current, and
// concurrent writers of a resource commit in the order of their tokens.
// Exec does the same for one statement on a *sql.DB. The statement is
// PostgreSQL's and SQLite's (3.24 or later) INSERT ... ON CONFLICT, with
// $1 and $2 as placeholders, which both take. See Schema and Advance.
package fence
