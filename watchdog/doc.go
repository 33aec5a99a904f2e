// Package watchdog keeps the leases of held locks alive with one goroutine
// per client, however many locks it holds.
//
// It needs no relock Client: use it to renew leases of locks you take
// yourself, such as a Redisson RLock taken with package scripts, or a
// lock of your own whose renewal is a Lua script. Make a Watchdog for your
// go-redis client with New (Options.Timeout is the lease it renews); once
// a lock is taken, Watch it with the script call that renews it (a
// Renewal) and a func to be told if the lease is lost; Stop its Lease when
// you release the lock, and Close the Watchdog when you are done.
//
// Every third of the lease the watchdog sends one renewal per held lock,
// in batches of at most Options.BatchSize renewals (DefaultBatchSize,
// 2000, by default): a batch is one pipeline, one round trip per Redis
// node, with a deadline of its own (a third of the lease). A few locks
// share one batch an interval; many are spread over 16 phases of the
// interval, so that the load on Redis is smooth and no batch grows with
// the number of locks held: 100 000 locks cost about 64 batches an
// interval, four every sixteenth of it. A lease ends in one of three ways:
// its owner calls Lease.Stop (unlock); a renewal replies 0, meaning the
// lock is gone from Redis (ErrGone); or no renewal has succeeded for long
// enough that the server may already have expired it (ErrExpired). A
// renewal sent at time s that succeeds keeps the lock until at least s +
// timeout on the server, whatever delays the renewal met on its way, so
// the watchdog reports the loss a margin (Options.Margin) before s +
// timeout, s being the send time of the last success.
// A Redis error, or a batch cut off at its deadline, is not a loss by
// itself: the watchdog sends the batch's leases again a fifth of an
// interval (at most a second) later, and keeps trying until that
// deadline.
//
// relock's own clients renew their locks with this watchdog, and the
// cause of a relock lock's loss wraps ErrGone or ErrExpired when the
// watchdog found it.
//
// As with relock.New, New's error reports bad options only. The errors'
// sentinels are the root package's: ErrClosed is relock.ErrClosed itself,
// so errors.Is matches either name, and bad input (a nil *Watchdog
// included) matches relock.ErrInvalidArgument.
package watchdog
