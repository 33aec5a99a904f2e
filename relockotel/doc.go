// Package relockotel turns what a relock Client tells its Observer into
// OpenTelemetry metrics and spans, and its Stats into up-down counters.
// It is a module of its own, github.com/relock-go/relock/relockotel, so
// that programs that do not use OpenTelemetry never download it.
//
// Wire it with relock.Options.Observer, and Watch each Client whose
// Stats should be counted:
//
//	obs, err := relockotel.New(&relockotel.Options{MeterProvider: mp, TracerProvider: tp})
//	rc, err := relock.New(rdb, &relock.Options{Observer: obs})
//	stop, err := obs.Watch(rc)
//	defer stop()
//
// # Metrics
//
// The instrumentation scope is the module path with Version. Durations
// are in seconds. Every instrument that concerns one lock has the
// attribute relock.lock.kind (the lock's package: "reentrant", "fair",
// ..., "election"), and relock.lock.name only with
// Options.LockNameAttribute.
//
//   - relock.acquire.duration (histogram, s): from the call of an
//     acquire to its end, with relock.operation.name (the method: Lock,
//     TryLock, Acquire, TryAcquire, Await, TryAwait, Campaign,
//     TryCampaign) and relock.acquire.outcome: "acquired",
//     "not_acquired" (the wait bound ran out or the caller's context
//     ended), "closed" (the Client closed) or "failed" (Redis answered
//     with an error or could not be reached, or the input was bad). A
//     failed acquire also has error.type (see Spans).
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
//   - relock.master.may_evict (counter, {master}): Redis masters that
//     may evict keys under memory pressure (maxmemory set,
//     maxmemory-policy not noeviction), where an evicted lock lets a
//     second holder in; each client counts a master once. Attributes
//     relock.master.maxmemory_policy ("unknown" when the client's user
//     may not run INFO) and, on a cluster, server.address. Alert on any.
//   - relock.hold.count ({hold}), relock.waiter.count ({waiter}) and
//     relock.subscription.count ({channel}) (observable up-down
//     counters): the sums of Stats over the watched Clients, without
//     attributes.
//
// # Spans
//
// Each acquire and unlock is a span named after its operation:
// "relock.Lock", "relock.TryLock", "relock.Acquire", "relock.Await",
// "relock.Campaign", ..., "relock.Unlock" and "relock.Release", a child
// of the span in the caller's context, with the attributes
// relock.lock.kind, relock.lock.name and relock.operation.name. The
// context the Observer gives back to relock carries the span, so the
// lock's own Redis commands are its children when the go-redis client
// is traced (redisotel). An acquire's span also has
// relock.acquire.outcome and relock.acquire.attempts (the scripts the
// acquire ran). Its status is Error only when the outcome is "failed": a
// TryLock that gives up or an acquire ended by Close is an expected end.
// An unlock's span is an Error when the unlock failed, as an unlock by an
// owner that holds no hold does. A failed span has the error recorded
// and error.type: the relock error it matches ("invalid_argument",
// "not_held", "upgrade", "not_reentrant", "lock_lost", "closed"), else
// "timeout", "canceled", "redis_error" (Redis answered with an error),
// "network", or "_OTHER".
//
// # Cardinality
//
// Lock names are on spans but not, by default, on metric attributes: a
// service that takes a lock per order or per user would make a time series
// per name. Set Options.LockNameAttribute only when the names are few and
// fixed.
package relockotel
