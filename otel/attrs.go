package relockotel

import (
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/observe"
)

// The attribute keys.
const (
	kindKey     = attribute.Key("relock.lock.kind")
	nameKey     = attribute.Key("relock.lock.name")
	outcomeKey  = attribute.Key("relock.acquire.outcome")
	attemptsKey = attribute.Key("relock.acquire.attempts")
	causeKey    = attribute.Key("relock.hold.end_cause")
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

// kindAttrs are the metric options for one lock kind without the lock's
// name, built once per kind: a measurement then costs no attribute set of
// its own. The options are slices so that they pass to the variadic
// Record and Add as they are, without a slice built per call.
type kindAttrs struct {
	acquire [numOutcomes][]metric.RecordOption // kind and outcome
	hold    [len(causes)][]metric.RecordOption // kind and end cause
	lost    []metric.AddOption                 // kind
}

// newKindAttrs builds the options for kind.
func newKindAttrs(kind string) *kindAttrs {
	k := kindKey.String(kind)
	a := &kindAttrs{lost: []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(k))}}
	for o := range observe.Outcome(numOutcomes) {
		a.acquire[o] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(k, outcomeKey.String(o.String())))}
	}
	for i, c := range causes {
		a.hold[i] = []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(k, causeKey.String(c)))}
	}
	return a
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

// acquireOpts are the options of an acquire of l that ended with
// outcome.
func (o *Observer) acquireOpts(l observe.Lock, outcome observe.Outcome) []metric.RecordOption {
	outcome = known(outcome)
	if !o.names {
		return o.kind(l.Kind).acquire[outcome]
	}
	return []metric.RecordOption{metric.WithAttributes(kindKey.String(l.Kind), nameKey.String(l.Name), outcomeKey.String(outcome.String()))}
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
