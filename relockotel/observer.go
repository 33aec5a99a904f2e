package relockotel

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/relock-go/relock/observe"
)

// scope is the instrumentation scope of the meter and the tracer: the
// module's path; its version is Version.
const scope = "github.com/relock-go/relock/relockotel"

// Options configure an Observer. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// MeterProvider makes the metrics. Default otel.GetMeterProvider(),
	// the global one as New finds it (it forwards to a provider set
	// later with otel.SetMeterProvider).
	MeterProvider metric.MeterProvider
	// TracerProvider makes the spans. Default otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// LockNameAttribute puts relock.lock.name on the metrics that concern
	// one lock. Default false: a time series per lock name grows without
	// bound where names are per order or per user. Spans always have it.
	LockNameAttribute bool
}

// An Observer is an observe.Observer that records OpenTelemetry metrics
// and spans (see the package documentation). Create one with New and set
// it as relock.Options.Observer of one Client or several. Its methods are
// safe for concurrent use; an Observer must not be copied.
type Observer struct {
	tracer trace.Tracer
	meter  metric.Meter
	names  bool     // Options.LockNameAttribute
	kinds  sync.Map // lock kind -> *kindAttrs (attrs.go)
	// acquires: opKind -> *acquireAttrs (attrs.go)
	acquires sync.Map

	acquireDuration metric.Float64Histogram
	holdDuration    metric.Float64Histogram
	leaseLost       metric.Int64Counter
	leaked          metric.Int64Counter
	roundDuration   metric.Float64Histogram
	renewals        metric.Int64Counter
	renewalFailures metric.Int64Counter
	mayEvict        metric.Int64Counter

	spans sync.Map // observe.Op -> span name, "relock." + op

	counts // watch.go
}

// Bucket boundaries, in seconds. An uncontended acquire takes a few
// round trips (a few hundred microseconds on a LAN), a contended one as
// long as the holder keeps the lock; holds last from milliseconds to
// hours; a watchdog round takes a round trip or, with thousands of leases,
// a few milliseconds more.
var (
	acquireBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}
	holdBuckets    = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600}
	roundBuckets   = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

// New returns an Observer with opts; its error is the MeterProvider's
// refusal of an instrument.
func New(opts *Options) (*Observer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	m := o.MeterProvider.Meter(scope, metric.WithInstrumentationVersion(Version), metric.WithSchemaURL(semconv.SchemaURL))
	tracer := o.TracerProvider.Tracer(scope, trace.WithInstrumentationVersion(Version), trace.WithSchemaURL(semconv.SchemaURL))
	obs := &Observer{tracer: tracer, meter: m, names: o.LockNameAttribute}
	var err error
	histogram := func(dst *metric.Float64Histogram, name, desc string, buckets []float64) {
		if err == nil {
			*dst, err = m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
		}
	}
	counter := func(dst *metric.Int64Counter, name, unit, desc string) {
		if err == nil {
			*dst, err = m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		}
	}
	updown := func(dst *metric.Int64ObservableUpDownCounter, name, unit, desc string) {
		if err == nil {
			*dst, err = m.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		}
	}
	histogram(&obs.acquireDuration, "relock.acquire.duration", "Time from the call of an acquire to its end.", acquireBuckets)
	histogram(&obs.holdDuration, "relock.hold.duration", "Time from an owner's first acquire of a lock to the end of its last hold.", holdBuckets)
	counter(&obs.leaseLost, "relock.lease.lost", "{lease}", "Holds that ended because their lease was lost or ran out.")
	counter(&obs.leaked, "relock.hold.leaked", "{hold}", "Holds whose lock contexts all became unreachable without an Unlock (forgotten unlocks): their renewal stopped.")
	histogram(&obs.roundDuration, "relock.watchdog.round.duration", "Time from sending a watchdog renewal round to its answers.", roundBuckets)
	counter(&obs.renewals, "relock.watchdog.renewals", "{renewal}", "Leases the watchdog renewed or tried to.")
	counter(&obs.renewalFailures, "relock.watchdog.renewal.failures", "{renewal}", "Lease renewals that got no answer.")
	counter(&obs.mayEvict, "relock.master.may_evict", "{master}", "Redis masters found to evict keys under memory pressure (maxmemory set, maxmemory-policy not noeviction), where an evicted lock lets a second holder in, or whose policy could not be read; each client counts a master once.")
	updown(&obs.holds, "relock.hold.count", "{hold}", "Owners' holds on locks, one per owner and lock, in the watched clients.")
	updown(&obs.waiters, "relock.waiter.count", "{waiter}", "Acquires waiting on the watched clients' subscriptions.")
	updown(&obs.subscriptions, "relock.subscription.count", "{channel}", "Channels the watched clients are subscribed to, for waiters or lingering.")
	if err != nil {
		return nil, err
	}
	return obs, nil
}

// StartAcquire starts a span named after op ("relock.Lock",
// "relock.Acquire", ...), a child of ctx's span, and returns ctx with
// that span, for the acquire's Redis commands, and the func that records
// the acquire's duration and ends the span.
func (o *Observer) StartAcquire(ctx context.Context, l observe.Lock, op observe.Op) (context.Context, func(observe.Acquire)) {
	ctx, span := o.tracer.Start(ctx, o.spanName(op),
		trace.WithAttributes(kindKey.String(l.Kind), nameKey.String(l.Name), opKey.String(string(op))))
	return ctx, func(a observe.Acquire) {
		// ctx carries the span: an exemplar of the measurement links to it.
		o.acquireDuration.Record(ctx, a.Wait.Seconds(), o.acquireOpts(l, op, a)...)
		if span.IsRecording() {
			span.SetAttributes(outcomeKey.String(known(a.Outcome).String()), attemptsKey.Int(a.Attempts))
			// observe guarantees an error with Failed.
			if known(a.Outcome) == observe.Failed {
				fail(span, a.Err)
			}
		}
		span.End()
	}
}

// StartUnlock starts a span named after op ("relock.Unlock" or
// "relock.Release"), a child of ctx's span, and returns ctx with that
// span and the func that ends it, or nil when the span records nothing.
func (o *Observer) StartUnlock(ctx context.Context, l observe.Lock, op observe.Op) (context.Context, func(error)) {
	ctx, span := o.tracer.Start(ctx, o.spanName(op),
		trace.WithAttributes(kindKey.String(l.Kind), nameKey.String(l.Name), opKey.String(string(op))))
	if !span.IsRecording() {
		// Ending it would do nothing: the unlock need not call back.
		return ctx, nil
	}
	return ctx, func(err error) {
		if err != nil {
			fail(span, err)
		}
		span.End()
	}
}

// fail marks span failed with err, by the conventions: status Error,
// the error recorded as an exception event, and error.type.
func fail(span trace.Span, err error) {
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// spanName is "relock." + op, built once per op: the ops are a few
// method names.
func (o *Observer) spanName(op observe.Op) string {
	if n, ok := o.spans.Load(op); ok {
		return n.(string)
	}
	n, _ := o.spans.LoadOrStore(op, "relock."+string(op))
	return n.(string)
}

// HoldEnded records the hold's duration and, when its lease was lost or
// its Unlock forgotten, counts it.
func (o *Observer) HoldEnded(e observe.HoldEnd) {
	ctx, c := context.Background(), causeOf(e.Cause)
	o.holdDuration.Record(ctx, e.Held.Seconds(), o.holdOpts(e.Lock, c)...)
	switch c {
	case causeLost:
		o.leaseLost.Add(ctx, 1, o.lostOpts(e.Lock)...)
	case causeLeaked:
		o.leaked.Add(ctx, 1, o.lostOpts(e.Lock)...)
	}
}

// WatchdogRound records the round's duration and counts its renewals and
// failures, zero ones included, so that both series exist from the first
// round.
func (o *Observer) WatchdogRound(r observe.Round) {
	ctx := context.Background()
	o.roundDuration.Record(ctx, r.Duration.Seconds())
	o.renewals.Add(ctx, int64(r.Leases))
	o.renewalFailures.Add(ctx, int64(r.Failures))
}

// MayEvict counts the master, with its maxmemory-policy, "unknown" when
// it could not be read, and its address on a cluster.
func (o *Observer) MayEvict(e observe.Eviction) {
	policy := e.Policy
	if e.Err != nil || policy == "" {
		policy = "unknown"
	}
	attrs := []attribute.KeyValue{policyKey.String(policy)}
	if e.Addr != "" {
		attrs = append(attrs, semconv.ServerAddress(e.Addr))
	}
	o.mayEvict.Add(context.Background(), 1, metric.WithAttributes(attrs...))
}
