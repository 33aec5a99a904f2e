// Package election provides leader election on relock's fair lock, with
// the semantics of etcd's concurrency.Election in Go form.
//
// # Guarantees
//
//   - One leader at a time, but only while its lease holds (the fair
//     lock's exclusion): "Terms" tells what a lease cannot promise, and
//     how terms fence a deposed leader's late writes.
//   - A leader that stops renewing (its process killed, its network cut)
//     is replaced once its lease runs out: the election's
//     Options.WatchdogTimeout, renewed every third of it by the client's
//     watchdog, or else the client's WatchdogTimeout (30 s by default).
//   - Candidates are elected in the order they arrived: one that keeps
//     dropping out and coming back cannot starve the others.
//   - The leadership context Campaign returns is cancelled when the
//     leadership ends: with cause relock.ErrLockLost when the leader's
//     lease was lost, which happens before another candidate can be
//     elected (the fair lock's lost-lease promise), and with
//     relock.ErrClosed when the Client closes.
//   - ctx bounds the campaign and the leadership: when it ends while the
//     candidate waits, Campaign returns an error matching
//     relock.ErrNotAcquired; while it leads, the candidate resigns.
//   - No reentrancy: each campaign has an owner of its own, and an
//     Election campaigns for one leadership at a time (a second Campaign
//     while one waits or leads fails with ErrCampaigning).
//
// # Use
//
// Candidates call Campaign, which waits until they are elected and
// returns the leadership context. Resign hands the leadership to the
// next candidate in line at once; Proclaim changes the leader's value;
// Leader reads the current leader; Observe delivers every change through
// pub/sub, without polling.
//
// # Terms
//
// Every leadership draws a term from a counter that only grows, so the
// terms of successive leaders strictly increase. A leader's term is
// TermOf(its leadership context). Exclusion rests on a lease: a leader
// that stops renewing (a long pause, a partition) is told by its context,
// but work it already sent elsewhere may still arrive after its
// successor's. Systems that must not accept a deposed leader's writes
// should carry the term with each write and reject any term lower than
// one they have seen: the term is a fencing token.
//
// # Redis layout
//
// For an election named name (hash-tagged, so that a cluster keeps them
// on one node):
//
//   - relock_election:{name}: the candidates' fair lock (package fair;
//     its queue keys follow);
//   - relock_election_leader:{name}: a hash of the leader's value, term
//     and lock field, valid only while that field holds the lock;
//   - relock_election_term:{name}: the term counter, never deleted;
//   - relock_election_channel:{name}: where each election, proclamation
//     and resignation is announced (the message is the term);
//   - relock_election_log:{name}: a stream of the last 1000 changes,
//     which observers read.
package election
