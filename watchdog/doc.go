// Package watchdog keeps the leases of held locks alive with one goroutine
// per client, however many locks it holds.
//
// It needs nothing else of relock: use it to renew leases of locks you
// take yourself, such as a Redisson RLock taken with package scripts, or
// a lock of your own whose renewal is a Lua script. Make a Watchdog for
// your go-redis client with New; once a lock is taken, Watch it with the
// script call that renews it (a Renewal) and a func to be told if the
// lease is lost; Stop its Lease when you release the lock, and Close the
// Watchdog when you are done.
//
// Every third of the lease the watchdog sends one renewal per held lock,
// all in one pipeline, so a round costs one round trip per Redis node,
// not one per lock. A lease ends in one of three ways: its owner calls
// Lease.Stop (unlock); a renewal replies 0, meaning the lock is gone from
// Redis (ErrGone); or no renewal has succeeded for long enough that the
// server may already have expired it (ErrExpired). A renewal sent at time
// s that succeeds keeps the lock until at least s + timeout on the
// server, whatever delays the renewal met on its way, so the watchdog
// reports the loss a margin (SetMargin) before s + timeout, s being the
// send time of the last success.
// A Redis error is not a loss by itself: the watchdog keeps trying until
// that deadline.
//
// relock's own clients renew their locks with this watchdog, and the
// cause of a relock lock's loss wraps ErrGone or ErrExpired when the
// watchdog found it.
package watchdog
