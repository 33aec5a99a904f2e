// Package relockotel turns what a relock Client tells its Observer into
// OpenTelemetry metrics and spans, and its Stats into gauges. It is a
// module of its own, github.com/relock-go/relock/otel, so that programs
// that do not use OpenTelemetry never download it.
//
// Wire it with relock.Options.Observer, and Watch each Client whose
// Stats should be gauges:
//
//	obs, err := relockotel.New(&relockotel.Options{MeterProvider: mp, TracerProvider: tp})
//	rc, err := relock.New(rdb, &relock.Options{Observer: obs})
//	stop, err := obs.Watch(rc)
//	defer stop()
//
// # Metrics
//
// Durations are in seconds. Every instrument that concerns one lock has
// the attribute relock.lock.kind (the lock's package: "reentrant",
// "fair", ...), and relock.lock.name only with Options.LockNameAttribute.
//
//   - relock.acquire.duration (histogram, s): from the call of a Lock,
//     TryLock, semaphore Acquire, latch Await or election Campaign to its
//     end, with relock.acquire.outcome: "acquired", "not_acquired" (the
//     wait bound ran out or the caller's context ended), "closed" (the
//     Client closed) or "failed" (Redis answered with an error or could not
//     be reached, or the input was bad).
//   - relock.hold.duration (histogram, s): from an owner's first acquire
//     of a lock to the end of its last hold, with relock.hold.end_cause:
//     "unlock", "lost" (the lease was lost or ran out: the lock may be
//     someone else's now), "closed" (the Client closed while holding) or
//     "leaked" (every context the hold's Lock calls returned became
//     unreachable without an Unlock: a forgotten Unlock, whose renewal
//     stopped; see relock.ErrLeaked).
//   - relock.lease.lost (counter, {lease}): holds that ended "lost".
//   - relock.hold.leaked (counter, {hold}): holds that ended "leaked":
//     alert on any.
//   - relock.watchdog.round.duration (histogram, s): each watchdog round
//     that renewed at least one lease, from sending it to its answers.
//   - relock.watchdog.renewals (counter, {renewal}): leases the rounds
//     renewed or tried to; relock.watchdog.renewal.failures (counter,
//     {renewal}) those of them that got no answer (the watchdog retries
//     them soon). Neither has attributes: a round renews every kind.
//   - relock.holds ({hold}), relock.waiters ({waiter}) and
//     relock.subscriptions ({channel}) (observable gauges): the sums of
//     Stats over the watched Clients, without attributes.
//
// # Spans
//
// "relock.Lock" spans an acquire (of any kind, semaphores and latches
// included) and "relock.Unlock" an unlock, each a child of the span in the
// caller's context, with the attributes relock.lock.kind and
// relock.lock.name. A relock.Lock span also has relock.acquire.outcome
// and relock.acquire.attempts (the scripts the acquire ran). Its status is
// Error, with the error recorded, only when the outcome is "failed": a
// TryLock that gives up or an acquire ended by Close is an expected end.
// A relock.Unlock span's status is Error when the unlock failed, as an
// unlock by an owner that holds no hold does.
//
// # Cardinality
//
// Lock names are on spans but not, by default, on metric attributes: a
// service that takes a lock per order or per user would make a time series
// per name. Set Options.LockNameAttribute only when the names are few and
// fixed.
package relockotel
