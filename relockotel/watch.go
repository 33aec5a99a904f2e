package relockotel

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/metric"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/observe"
)

// counts are the observable up-down counters of the watched clients'
// Stats: counts that go up and down, which add up across attributes and
// processes, as a gauge's values do not.
//
// One callback observes the sums over all watched clients, once per
// instrument: an observable instrument keeps the last of several
// observations with the same attributes, and OpenTelemetry forbids such
// duplicates, so a callback
// per client would need a client attribute (a random ID, a new series at
// every restart) to be correct. The callback is registered while at
// least one client is watched, so that nothing is observed after the
// last stop.
//
// The SDK runs callbacks holding its pipeline's lock, and Unregister
// takes that lock; so the callback reads the clients from an atomic
// pointer and never takes mu, which Watch and stop hold across
// RegisterCallback and Unregister.
type counts struct {
	holds, waiters, subscriptions metric.Int64ObservableUpDownCounter

	mu      sync.Mutex             // guards watches and reg
	watches map[*relock.Client]int // the Watch calls not yet stopped, per client
	reg     metric.Registration    // the callback; nil when nothing is watched

	watched atomic.Pointer[[]*relock.Client] // the keys of watches, for the callback
}

// Watch makes the Observer's count instruments add rc's Stats, summed with those
// of the other watched Clients, until the stop it returns is called. A
// Client watched twice counts once, until both Watches are stopped. stop
// is idempotent; its error is the MeterProvider's failure to unregister
// the callback of the count instruments, after the last watched Client's stop. Watch's
// error is a nil rc (matching relock.ErrInvalidArgument) or the
// MeterProvider's refusal of the callback.
func (o *Observer) Watch(rc *relock.Client) (stop func() error, err error) {
	if rc == nil {
		return nil, fmt.Errorf("relockotel: Watch of a nil client: %w", relock.ErrInvalidArgument)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.reg == nil {
		if o.reg, err = o.meter.RegisterCallback(o.observe, o.holds, o.waiters, o.subscriptions); err != nil {
			return nil, err
		}
	}
	if o.watches == nil {
		o.watches = make(map[*relock.Client]int)
	}
	o.watches[rc]++
	o.publish()
	var (
		once    sync.Once
		stopErr error
	)
	return func() error {
		once.Do(func() { stopErr = o.unwatch(rc) })
		return stopErr
	}, nil
}

// unwatch undoes one Watch of rc, and unregisters the callback when no
// client is left.
func (o *Observer) unwatch(rc *relock.Client) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.watches[rc]--; o.watches[rc] > 0 {
		return nil
	}
	delete(o.watches, rc)
	o.publish()
	if len(o.watches) > 0 {
		return nil
	}
	reg := o.reg
	o.reg = nil
	return reg.Unregister()
}

// publish gives the callback the watched clients. mu is held.
func (o *Observer) publish() {
	clients := slices.Collect(maps.Keys(o.watches))
	o.watched.Store(&clients)
}

// observe is the count instruments' callback.
func (o *Observer) observe(_ context.Context, obs metric.Observer) error {
	clients := o.watched.Load()
	if clients == nil {
		// Registered by the first Watch, which has not published yet.
		return nil
	}
	var sum observe.Stats
	for _, rc := range *clients {
		st := rc.Stats()
		sum.Holds += st.Holds
		sum.Waiters += st.Waiters
		sum.Channels += st.Channels
	}
	obs.ObserveInt64(o.holds, int64(sum.Holds))
	obs.ObserveInt64(o.waiters, int64(sum.Waiters))
	obs.ObserveInt64(o.subscriptions, int64(sum.Channels))
	return nil
}
