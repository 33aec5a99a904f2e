package renew_test

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// A proxy forwards loopback TCP connections to a server and can turn the
// ones it holds into dead connections: open, but forwarding nothing, as
// after a NAT or load balancer silently dropped them. New connections
// still work.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	links  []*proxyLink
	wg     sync.WaitGroup
}

type proxyLink struct {
	client, server net.Conn
	dead           atomic.Bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		l := &proxyLink{client: c, server: s}
		p.mu.Lock()
		p.links = append(p.links, l)
		p.mu.Unlock()
		p.wg.Go(func() { l.pump(s, c) })
		p.wg.Go(func() { l.pump(c, s) })
	}
}

// pump copies src to dst until either fails, dropping what it reads once
// the link is dead.
func (l *proxyLink) pump(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.dead.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// kill makes every connection the proxy holds dead.
func (p *proxy) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.links {
		l.dead.Store(true)
	}
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	for _, l := range p.links {
		l.client.Close()
		l.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// A connection that goes dead must not cost the leases while Redis is
// reachable on a new connection. The round stuck on it is cut off by its
// context after one interval (so run's comment says) and a later round
// renews on a new connection, before the lease could expire.
//
// Two things defeat this today. go-redis honours a context's deadline on
// the socket only with ContextTimeoutEnabled; without it the stuck round
// lasts the client's ReadTimeout (5 s by default, longer than this lease).
// And with it, the round's context ends exactly one interval after its
// start, that is just after the next tick, which run skips because the
// round is still in flight: the next attempt comes two intervals after
// the stuck one, one lease after the last success, later than the 9/10 of
// a lease at which the loss is reported.
func TestDeadConnection(t *testing.T) {
	redistest.SkipShort(t, "each case waits out a round stuck on a dead connection, and a lease")
	for _, tc := range []struct {
		name string
		opts func(*redis.Options)
	}{
		{"default client", func(o *redis.Options) { o.ContextTimeoutEnabled = false }},
		{"context timeouts", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t)
			p := newProxy(t, s.Addr)
			admin := s.Client(t)
			rdb, c, _ := hookedClient(t, s, func(o *redis.Options) {
				o.Addr = p.addr()
				if tc.opts != nil {
					tc.opts(o)
				}
			})
			// The hook reports rounds for the log; what the test asserts
			// it reads from the server, so that it holds whichever client
			// the watchdog sends its rounds on.
			if err := scriptsLoaded(admin); err != nil {
				t.Fatal(err)
			}
			const lease = 3 * time.Second
			w := newWatchdog(t, rdb, lease)
			name := redistest.Key(t)
			field, sent := hold(t, admin, name, lease)
			l := newLosses()
			if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
				t.Fatal(err)
			}
			awaitRenewal(t, admin, name)
			p.kill()
			killed := time.Now()
			// Until the lock could have expired, it must be renewed on a
			// new connection and never reported lost.
			for time.Since(killed) < lease {
				if calls := l.all(); len(calls) != 0 {
					got := calls[0]
					_, pipes := c.snapshot()
					for _, p := range pipes {
						if p.names["evalsha"] > 0 {
							t.Logf("round sent at %v, done at %v: %v", p.start.Sub(killed).Round(time.Millisecond),
								p.end.Sub(killed).Round(time.Millisecond), p.err)
						}
					}
					t.Fatalf("lease lost (%v) %v after its connection died, though Redis was reachable",
						got.reason, got.at.Sub(killed).Round(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
			// The last renewal before the kill kept the lock until at
			// most the kill plus the lease, which is past.
			if d := pttl(t, admin, name); d <= 0 {
				t.Fatalf("lock not renewed after its connection died: PTTL %v", d)
			}
		})
	}
}

// Close returns promptly while Redis is frozen: the round in flight is cut
// off by its context (one interval), not left to the client's read
// timeout, so closing a client never hangs for long on an unresponsive
// server. Without ContextTimeoutEnabled go-redis ignores the context's
// deadline and Close waits for the ReadTimeout (forever with -1).
func TestCloseWhileFrozen(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(*redis.Options)
	}{
		{"default client", func(o *redis.Options) { o.ContextTimeoutEnabled = false }},
		{"context timeouts", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t)
			rdb, _, _ := hookedClient(t, s, tc.opts)
			const lease = 900 * time.Millisecond
			w := newWatchdog(t, rdb, lease)
			name := redistest.Key(t)
			field, sent := hold(t, rdb, name, lease)
			l := newLosses()
			if _, err := w.Watch(renewal(name, field, lease), sent, l.lost); err != nil {
				t.Fatal(err)
			}
			awaitRenewal(t, rdb, name)
			if err := s.Pause(); err != nil {
				t.Fatal(err)
			}
			l.await(t, wait) // a round is stuck by now
			start := time.Now()
			done := make(chan struct{})
			go func() { _ = w.Close(); close(done) }()
			const bound = lease/3 + 2*time.Second
			select {
			case <-done:
			case <-time.After(bound):
				_ = s.Resume()
				<-done
				t.Fatalf("Close did not return within %v while the server was frozen (it returned %v after the server resumed)",
					bound, time.Since(start).Round(time.Millisecond)-bound)
			}
		})
	}
}
