// Package multilock provides MultiLock, which holds several locks as one:
// all of them or none.
//
// A MultiLock has no Redis key of its own. Its members are any
// relock.Locker values: reentrant or fair mutexes, a read/write lock's
// Reader or Writer side, on one client or on clients of different Redis
// servers. Lock takes them one after another, always in the same
// canonical order (by name, then by the server the member's client talks
// to), so two MultiLocks over overlapping sets cannot each hold a member
// the other waits for: there is no deadlock between them, in one process
// or across processes configured alike. If a member cannot be taken (its
// TryLock's share of the wait ran out, ctx ended, Redis failed), every
// member taken so far is released and the error names the member that
// failed.
//
// The owner travels in the context as for every relock lock: a Lock with
// the context a MultiLock's Lock returned re-enters every member. The
// returned context is cancelled as soon as any member's is: a lost lease
// on any member (cause relock.ErrLockLost) ends the whole hold.
//
// Guarantees are those of the members: mutual exclusion on each member
// holds while that member's lease holds.
package multilock
