package relockotel

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/observe"
)

// The attribute keys.
const (
	kindKey     = attribute.Key("relock.lock.kind")
	nameKey     = attribute.Key("relock.lock.name")
	opKey       = attribute.Key("relock.operation.name")
	outcomeKey  = attribute.Key("relock.acquire.outcome")
	attemptsKey = attribute.Key("relock.acquire.attempts")
	causeKey    = attribute.Key("relock.hold.end_cause")
	policyKey   = attribute.Key("relock.master.maxmemory_policy")
)

// numOutcomes counts the acquire outcomes, observe.Acquired (0) to
// observe.Failed.
const numOutcomes = int(observe.Failed) + 1

// known is o, or Failed for an Outcome that observe may add later (the
// name its String gives it).
func known(o observe.Outcome) observe.Outcome {
	if o < observe.Acquired || o > observe.Failed {
		return observe.Failed
	}
	return o
}

// A cause is why a hold ended: an index in causes.
type cause int

const (
	causeUnlock cause = iota
	causeLost
	causeClosed
	causeLeaked
)

// causes are the relock.hold.end_cause values, indexed by cause.
var causes = [...]string{causeUnlock: "unlock", causeLost: "lost", causeClosed: "closed", causeLeaked: "leaked"}

// causeOf classifies a HoldEnd's Cause. observe documents nil and
// relock.ErrUnlocked (an unlock), relock.ErrLockLost and relock.ErrClosed; any other error would also be
// a hold that ended without its owner's unlock while the Client went on,
// so it counts as lost.
func causeOf(err error) cause {
	switch {
	case err == nil || errors.Is(err, relock.ErrUnlocked):
		return causeUnlock
	case errors.Is(err, relock.ErrClosed):
		return causeClosed
	case errors.Is(err, relock.ErrLeaked):
		// Before lost: a leak matches relock.ErrLockLost too.
		return causeLeaked
	}
	return causeLost
}

// errorType is the error.type of a failed acquire or unlock: the
// relock sentinel err matches, in snake case, or how Redis failed it.
// The values are few and fixed, as the conventions ask; err's own type
// would be a wrapper's (semconv.ErrorType gives "*fmt.wrapErrors").
func errorType(err error) string {
	var rerr redis.Error
	var nerr net.Error
	switch {
	case errors.Is(err, relock.ErrInvalidArgument), errors.Is(err, relock.ErrInvalidName):
		return "invalid_argument"
	case errors.Is(err, relock.ErrNotHeld): // an ErrNoOwner too
		return "not_held"
	case errors.Is(err, relock.ErrUpgrade):
		return "upgrade"
	case errors.Is(err, relock.ErrNotReentrant):
		return "not_reentrant"
	case errors.Is(err, relock.ErrLockLost):
		return "lock_lost"
	case errors.Is(err, relock.ErrClosed):
		return "closed"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &rerr):
		return "redis_error" // Redis answered with an error
	case errors.As(err, &nerr):
		return "network"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

// kindAttrs are the metric options for one lock kind without the lock's
// name, built once per kind: a measurement then costs no attribute set of
// its own. The options are slices so that they pass to the variadic
// Record and Add as they are, without a slice built per call.
type kindAttrs struct {
	hold [len(causes)][]metric.RecordOption // kind and end cause
	lost []metric.AddOption                 // kind
}

// newKindAttrs builds the options for kind.
func newKindAttrs(kind string) *kindAttrs {
	k := kindKey.String(kind)
	a := &kindAttrs{lost: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(k))}}
	for i, c := range causes {
		a.hold[i] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(k, causeKey.String(c)))}
	}
	return a
}

// An opKind is a lock kind and an operation on it.
type opKind struct {
	kind string
	op   observe.Op
}

// acquireAttrs are the options of acquires of one opKind, indexed by
// outcome, without the lock's name; a failed one adds its error.type.
type acquireAttrs [numOutcomes][]metric.RecordOption

func newAcquireAttrs(k opKind) *acquireAttrs {
	var a acquireAttrs
	for o := range observe.Outcome(numOutcomes) {
		a[o] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(
			kindKey.String(k.kind), opKey.String(string(k.op)), outcomeKey.String(o.String())))}
	}
	return &a
}

// kind returns the options for kind, built at its first event. The
// kinds are a few fixed package names, so the cache stays small, and
// after a kind's first event its lookup takes no lock.
func (o *Observer) kind(kind string) *kindAttrs {
	if a, ok := o.kinds.Load(kind); ok {
		return a.(*kindAttrs)
	}
	a, _ := o.kinds.LoadOrStore(kind, newKindAttrs(kind))
	return a.(*kindAttrs)
}

// acquireOpts are the options of acquire a of l by op.
func (o *Observer) acquireOpts(l observe.Lock, op observe.Op, a observe.Acquire) []metric.RecordOption {
	outcome := known(a.Outcome)
	attrs := []attribute.KeyValue{kindKey.String(l.Kind), opKey.String(string(op)), outcomeKey.String(outcome.String())}
	switch {
	case outcome == observe.Failed:
		// Rare: a set of its own for each, with error.type.
		attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(a.Err)))
	case !o.names:
		k := opKind{l.Kind, op}
		c, ok := o.acquires.Load(k)
		if !ok {
			c, _ = o.acquires.LoadOrStore(k, newAcquireAttrs(k))
		}
		return c.(*acquireAttrs)[outcome]
	}
	if o.names {
		attrs = append(attrs, nameKey.String(l.Name))
	}
	return []metric.RecordOption{metric.WithAttributes(attrs...)}
}

// holdOpts are the options of a hold on l that ended with c.
func (o *Observer) holdOpts(l observe.Lock, c cause) []metric.RecordOption {
	if !o.names {
		return o.kind(l.Kind).hold[c]
	}
	return []metric.RecordOption{metric.WithAttributes(kindKey.String(l.Kind), nameKey.String(l.Name), causeKey.String(causes[c]))}
}

// lostOpts are the options of a count of l's holds: lost leases,
// leaks.
func (o *Observer) lostOpts(l observe.Lock) []metric.AddOption {
	if !o.names {
		return o.kind(l.Kind).lost
	}
	return []metric.AddOption{metric.WithAttributes(kindKey.String(l.Kind), nameKey.String(l.Name))}
}
