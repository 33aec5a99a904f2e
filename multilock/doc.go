// Package multilock provides MultiLock, which holds several locks as one:
// all of them or none.
//
// # Guarantees
//
//   - All or none: if a member cannot be taken (its TryLock's share of
//     the wait ran out, ctx ended, Redis failed), every member taken so
//     far is released and the error names the member that failed (and
//     matches relock.ErrNotAcquired and ctx.Err() when ctx ended).
//   - No deadlock between MultiLocks over overlapping sets, in one
//     process or across processes configured alike (see below).
//   - Otherwise the guarantees are those of the members: mutual exclusion
//     on each member holds while that member's lease holds, and each
//     member serves its waiters in its own order (only a fair.Mutex
//     member promises arrival order).
//   - The owner travels in the context as for every relock lock: a Lock
//     with the context a MultiLock's Lock returned re-enters every member.
//   - The returned context is cancelled as soon as any member's is: a
//     lost lease on any member (cause relock.ErrLockLost) ends the whole
//     hold.
//
// # How it works
//
// A MultiLock has no Redis key of its own. Its members are any
// relock.Locker values: reentrant or fair mutexes, a read/write lock's
// Reader or Writer side, on one client or on clients of different Redis
// servers. Lock takes them one after another, always in the same
// canonical order (by name, then by the server the member's client talks
// to), so two MultiLocks over overlapping sets cannot each hold a member
// the other waits for. TryLock spends one wait budget across all members.
package multilock
