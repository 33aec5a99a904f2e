// Package election provides leader election on relock's fair lock, with
// the semantics of etcd's concurrency.Election in Go form.
//
// Candidates call Campaign, which waits until they are elected, in the
// order they arrived (a candidate that keeps dropping out and coming
// back cannot starve the others), and returns a leadership context. That
// context is cancelled when the leadership ends: with cause
// relock.ErrLockLost when the leader's lease was lost, which happens
// before another candidate can be elected (it is the fair lock's lost
// lease promise), and with relock.ErrClosed when the Client closes.
// Resign hands the leadership to the next candidate in line at once;
// Proclaim changes the leader's value; Leader reads the current leader;
// Observe delivers every change through pub/sub, without polling.
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
//     and resignation is announced (the message is the term).
package election
