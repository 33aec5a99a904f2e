package relocktest

import (
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// tick is how often the embedded server's clock is set once Advance has
// moved it off the wall clock.
const tick = time.Millisecond

// embedded is the Kit's in-process server. Its keys' TTLs run with the
// wall clock (miniredis's ClockTTL), as a real server's do, and TIME
// reads the wall clock, until Advance: from then on a goroutine of the
// server's sets its clock to the wall clock plus what Advance added,
// every tick, since miniredis's TIME follows only a clock that is set.
type embedded struct {
	m *miniredis.Miniredis

	mu      sync.Mutex // guards ahead and ticking
	ahead   time.Duration
	ticking bool
	stop    chan struct{}
	done    chan struct{}
}

func startEmbedded() (*embedded, error) {
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true)
	if err := m.Start(); err != nil {
		return nil, err
	}
	return &embedded{m: m, stop: make(chan struct{}), done: make(chan struct{})}, nil
}

// Advance moves the embedded server's clock d forward: keys' TTLs run
// down by d, and TIME, which permits read to set and reclaim their
// expiries, jumps by d (from then on in steps of a millisecond). The
// clients' clocks do not move: timers, watchdog rounds and fixed leases'
// deadlines keep real time. It returns ErrNotEmbedded on a server of
// REDIS_ADDR, and does nothing for d <= 0.
func (k *Kit) Advance(d time.Duration) error {
	if k == nil {
		return errNil
	}
	if k.srv == nil {
		return ErrNotEmbedded
	}
	if d > 0 {
		k.srv.advance(d)
	}
	return nil
}

func (e *embedded) advance(d time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ahead += d
	e.m.SetTime(time.Now().Add(e.ahead))
	if !e.ticking {
		e.ticking = true
		go e.run()
	}
}

// run keeps the advanced clock moving with the wall clock until close.
func (e *embedded) run() {
	defer close(e.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case now := <-t.C:
			e.mu.Lock()
			e.m.SetTime(now.Add(e.ahead))
			e.mu.Unlock()
		}
	}
}

// close stops the clock and the server; a nil e does nothing.
func (e *embedded) close() {
	if e == nil {
		return
	}
	e.mu.Lock()
	ticking := e.ticking
	e.ticking = true // no clock starts after this
	e.mu.Unlock()
	if ticking {
		close(e.stop)
		<-e.done
	}
	e.m.Close()
}
