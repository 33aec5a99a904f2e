package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/transport"
)

// A PubSubMode is Config.PubSub, the root's Options.PubSub.
type PubSubMode int

// The modes, in the root's order (the root converts its own); 0 is
// PubSubAuto.
const (
	pubsubGlobal PubSubMode = iota + 1
	pubsubSharded
)

// pubsubMode decides the client's pub/sub mode, once: the hub the
// client's waiters subscribe through, and the command its scripts
// publish with (transport.Transport.SetSharded). The client's
// configuration decides it at construction (a single server, Sentinel,
// or a cluster with the mode set); otherwise (PubSubAuto on a cluster)
// only the cluster can tell whether it has sharded pub/sub, and a probe
// asks it in the background (probe.go), so that making a client never
// waits for Redis. Operations wait for the answer under their own
// context (Check); a probe that failed is made again by the next
// operation, unless the server refused it (an ACL user without PUBSUB
// SHARDNUMSUB), which no retry mends.
type pubsubMode struct {
	// Set by init, read-only after.
	rdb     redis.UniversalClient // the hub's client in global mode
	scripts redis.UniversalClient // the probe's, and the hub's in sharded mode
	cfg     *Config
	t       *transport.Transport // told the publish command

	// ready is the hub once the mode is decided; nil before. It is
	// stored once, under mu, after t was told, and read without it.
	ready atomic.Pointer[hub.Hub]

	mu      sync.Mutex // guards probe, refused and closed
	probe   *probe     // the probe under way, nil when none
	refused error      // the server refused the probe: every Check's error
	closed  bool       // Shutdown began: no hub is made any more
}

// A probe is one background attempt to learn the mode. err is set
// before done is closed.
type probe struct {
	done   chan struct{}
	err    error
	cancel context.CancelFunc // ends the probe's context (Shutdown)
}

// init sets m up for c over the caller's client rdb: decided at once
// when c's configuration tells, or with a probe started.
func (m *pubsubMode) init(c *Client, rdb redis.UniversalClient) {
	m.rdb, m.scripts, m.cfg, m.t = rdb, c.Scripts, &c.cfg, c.T
	_, cluster := c.Scripts.(*redis.ClusterClient)
	switch {
	case c.cfg.PubSub == pubsubGlobal || !cluster:
		m.ready.Store(m.make(false))
	case c.cfg.PubSub == pubsubSharded:
		m.ready.Store(m.make(true))
	default:
		m.mu.Lock()
		m.startLocked(c)
		m.mu.Unlock()
	}
}

// make tells m.t the publish command of a mode and makes its hub.
func (m *pubsubMode) make(sharded bool) *hub.Hub {
	m.t.SetSharded(sharded)
	hubRedis := m.rdb
	if sharded {
		// A sharded hub asks its client for the cluster's layout, and
		// reloads it when a master stops answering or a slot moves,
		// before it wakes the waiters; their acquires must then find the
		// new layout, so the hub asks the client they go through.
		hubRedis = m.scripts
	}
	h := hub.New(hubRedis, sharded, m.cfg.Log)
	h.SetLinger(m.cfg.Linger, m.cfg.MaxLingering)
	return h
}

// startLocked starts a probe, in a goroutine c owns; m.mu is held. After
// Shutdown began it starts none and leaves m.probe nil.
func (m *pubsubMode) startLocked(c *Client) {
	ctx, cancel := c.BackgroundContext(context.Background())
	p := &probe{done: make(chan struct{}), cancel: cancel}
	started := c.Background(func() {
		defer cancel()
		sharded, err := probeSharded(ctx, m.scripts.(*redis.ClusterClient))
		m.settle(p, sharded, err)
	})
	if !started {
		cancel()
		return
	}
	m.probe = p
}

// settle records probe p's answer, and makes the hub if it is one.
func (m *pubsubMode) settle(p *probe, sharded bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.probe = nil
	var refused redis.Error
	switch {
	case err == nil && m.closed:
		p.err = ErrClosed
	case err == nil:
		m.ready.Store(m.make(sharded))
	case errors.As(err, &refused):
		m.refused, p.err = err, err
	default:
		p.err = err
	}
	close(p.done)
}

// await returns once the mode is decided, or with the error that
// keeps it from being decided: ctx's end, the probe's failure, or
// ErrClosed. A probe that failed is made again by the next await.
func (m *pubsubMode) await(ctx context.Context, c *Client) error {
	if m.ready.Load() != nil {
		return nil
	}
	m.mu.Lock()
	if m.ready.Load() != nil {
		m.mu.Unlock()
		return nil
	}
	if m.refused != nil {
		m.mu.Unlock()
		return m.refused
	}
	if m.probe == nil && !m.closed {
		m.startLocked(c)
	}
	p := m.probe
	m.mu.Unlock()
	if p == nil {
		return ErrClosed
	}
	select {
	case <-p.done:
		if p.err != nil && c.life.closed.Load() {
			return ErrClosed
		}
		return p.err
	case <-ctx.Done():
		return fmt.Errorf("relock: waiting for the cluster to tell whether it has sharded pub/sub (PubSubAuto): %w", ctx.Err())
	}
}

// close stops m making a hub, ends the probe under way, and returns the
// hub to close, if one was made.
func (m *pubsubMode) close() *hub.Hub {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	if m.probe != nil {
		m.probe.cancel()
	}
	return m.ready.Load()
}

// Hub is the client's pub/sub hub. It may be called only after Check or
// Begin returned nil: only then is it made.
func (c *Client) Hub() *hub.Hub {
	h := c.pubsub.ready.Load()
	if h == nil {
		panic("core: the client's pub/sub mode read before Check or Begin returned")
	}
	return h
}
