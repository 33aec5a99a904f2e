package reorder

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// dialTimeout bounds the dial to the target for each client connection.
const dialTimeout = 5 * time.Second

// A Proxy forwards connections on a free loopback port of its own to a
// target server, one server connection per client connection, and
// applies its Rule to every command. Its methods are safe for concurrent
// use. Close stops it and waits for its goroutines; a Proxy is not
// reused after Close.
type Proxy struct {
	ln     net.Listener
	target string

	// ctx is the proxy's lifetime, which Close cancels: it ends dials
	// and holds.
	ctx    context.Context
	cancel context.CancelFunc

	rule atomic.Pointer[Rule] // nil: forward everything at once

	// order makes rule calls one at a time, in Seq order, so that a
	// Seeded rule sees the Cmds in the order they are numbered.
	order sync.Mutex // guards seq
	seq   int

	mu     sync.Mutex // guards closed, nconns, conns, held, flight, idle and every conn's state
	closed bool
	nconns int                // connections accepted, the last Cmd.Conn
	conns  map[*conn]struct{} // connections being served, closed by Close
	held   int                // commands read and not yet forwarded, all connections
	flight int                // commands forwarded and not yet answered
	idle   chan struct{}      // closed, and replaced, when held and flight reach 0

	// wg counts the accept loop and a serve per connection, which
	// itself waits for that connection's two readers.
	wg sync.WaitGroup
}

// Start starts a proxy on a free port of 127.0.0.1 to target, a loopback
// address ("127.0.0.1:6379", "[::1]:6379", "localhost:6379"), applying
// rule (nil forwards everything at once).
func Start(target string, rule Rule) (*Proxy, error) {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return nil, fmt.Errorf("reorder: target %q: %w", target, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("reorder: target %q is not a loopback address", target)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{
		ln: ln, target: target, ctx: ctx, cancel: cancel,
		conns: make(map[*conn]struct{}), idle: make(chan struct{}),
	}
	p.SetRule(rule)
	p.wg.Go(p.accept)
	return p, nil
}

// Addr returns the address clients dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetRule replaces the rule for the commands the proxy reads from now
// on; nil forwards everything at once. Commands already read keep their
// Actions.
func (p *Proxy) SetRule(r Rule) {
	if r == nil {
		p.rule.Store(nil)
		return
	}
	p.rule.Store(&r)
}

// Release ends every current hold: the commands held now are forwarded
// at once, each connection's in order. Commands read later are held as
// their rule says.
func (p *Proxy) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		for _, cmd := range c.queue {
			cmd.at = time.Time{}
		}
		c.poke()
	}
}

// Quiet waits until no command is held and every forwarded command has
// been answered (its reply passed on or discarded), including the
// commands of client connections that have closed. It counts the
// commands the proxy has read, from before their rule is called: a
// command still on its way from a client is not waited for. It returns
// an error when ctx ends first.
func (p *Proxy) Quiet(ctx context.Context) error {
	for {
		p.mu.Lock()
		held, flight, idle := p.held, p.flight, p.idle
		p.mu.Unlock()
		if held == 0 && flight == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("reorder: not quiet, %d commands held and %d in flight: %w", held, flight, ctx.Err())
		case <-idle:
		}
	}
}

// Close closes the listener and every connection, client and server
// sides, dropping the commands still held, and waits for the proxy's
// goroutines. It may be called more than once.
func (p *Proxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.client.Close()
		if c.server != nil {
			c.server.Close()
		}
	}
	p.mu.Unlock()
	p.cancel()
	p.ln.Close()
	p.wg.Wait()
}

// settled is called with p.mu held after held or flight went down: it
// wakes the Quiet callers once both are 0.
func (p *Proxy) settled() {
	if p.held == 0 && p.flight == 0 {
		close(p.idle)
		p.idle = make(chan struct{})
	}
}

func (p *Proxy) accept() {
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			return // Close closed the listener
		}
		c, ok := p.track(nc)
		if !ok {
			return
		}
		// wg counts this loop, so Close's Wait cannot have returned.
		p.wg.Go(func() { p.serve(c) })
	}
}

// track records a new client connection, for Close to close, and
// numbers it; once the proxy is closed it closes nc and reports false.
func (p *Proxy) track(nc net.Conn) (*conn, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		nc.Close()
		return nil, false
	}
	p.nconns++
	c := &conn{p: p, n: p.nconns, client: nc, wake: make(chan struct{}, 1)}
	p.conns[c] = struct{}{}
	return c, true
}

// decide numbers a command read on connection n and applies the rule to
// it.
func (p *Proxy) decide(n int, args []string) Action {
	p.order.Lock()
	defer p.order.Unlock()
	p.seq++
	r := p.rule.Load()
	if r == nil {
		return Action{}
	}
	return (*r)(Cmd{Conn: n, Seq: p.seq, Args: args})
}
