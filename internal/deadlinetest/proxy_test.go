package deadlinetest_test

import (
	"io"
	"net"
	"sync"
	"testing"
)

// A proxy forwards loopback connections to a redis-server until it is
// cut: then it either black-holes (accepts connections, reads and
// discards what they send, answers nothing: a server that hangs, or a
// network that drops every packet) or refuses (its listener and every
// connection are closed: nothing listens).
type proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex // guards mode, conns and closed
	mode   int
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // the accept loop and the pumps
}

const (
	pass = iota
	blackhole
)

// newProxy starts a proxy to target, stopped when tb ends.
func newProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.close)
	return p
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		mode, ok := p.track(c)
		if !ok {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if mode == blackhole {
				_, _ = io.Copy(io.Discard, c)
				return
			}
			p.pipe(c)
		}()
	}
}

// track records c, to be closed with the proxy, and returns the mode;
// once the proxy is closed it closes c and reports false.
func (p *proxy) track(c net.Conn) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return 0, false
	}
	p.conns[c] = struct{}{}
	return p.mode, true
}

// pipe forwards c to the target until either side closes or the proxy
// is cut, after which what c sends is discarded.
func (p *proxy) pipe(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	if _, ok := p.track(s); !ok {
		c.Close()
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.copy(c, s)
	}()
	p.copy(s, c)
}

// copy copies src to dst while the proxy passes, then discards src.
func (p *proxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.mode != pass
		p.mu.Unlock()
		if cut {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// Blackhole makes the proxy answer nothing from now on, on new and
// existing connections alike.
func (p *proxy) Blackhole() {
	p.mu.Lock()
	p.mode = blackhole
	p.mu.Unlock()
}

// Refuse closes the listener and every connection: nothing listens on
// the proxy's port any more.
func (p *proxy) Refuse() { p.close() }

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mode = blackhole
	p.mu.Unlock()
	p.wg.Wait()
}
