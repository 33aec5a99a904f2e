// Package blackhole is a TCP proxy on loopback that forwards to a server
// until it is cut, and then black-holes: it accepts connections, reads
// and discards whatever either side sends, and answers nothing (a server
// that hangs, or a network that drops every packet). The deadline tests
// (internal/deadlinetest) and the benchmark's deadline-overshoot
// scenario (bench/) stand it between their clients and a redis-server.
package blackhole

import (
	"io"
	"net"
	"sync"
)

// A Proxy forwards connections on a free loopback port of its own to a
// target address. Until Blackhole it copies both ways, and closes both
// sides of a pair once either side closes; from then on it reads and
// discards whatever either side sends, on the connections it has and on
// those it accepts later. Close closes its listener and every connection:
// nothing listens on its port any more.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex // guards cut, conns and closed
	cut    bool
	conns  map[net.Conn]struct{} // both sides of every pair, closed by Close
	closed bool

	wg sync.WaitGroup // the accept loop and a copier per direction of each pair
}

// Start starts a proxy to target on a free loopback port.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // Close closed the listener
		}
		cut, ok := p.track(c)
		if !ok {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if cut {
				_, _ = io.Copy(io.Discard, c)
				return
			}
			p.pair(c)
		}()
	}
}

// track records c, for Close to close, and returns whether the proxy is
// cut; once the proxy is closed it closes c and reports false.
func (p *Proxy) track(c net.Conn) (cut, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false, false
	}
	p.conns[c] = struct{}{}
	return p.cut, true
}

// pair connects c to the target and copies each way until a side
// closes, then closes both.
func (p *Proxy) pair(c net.Conn) {
	defer c.Close()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer s.Close()
	if _, ok := p.track(s); !ok {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.copy(c, s)
		c.Close()
		s.Close()
	}()
	p.copy(s, c)
}

// copy copies src to dst until src closes; once the proxy is cut it
// reads src and drops what it reads. The mode is read after each read,
// so nothing read after the cut reaches dst.
func (p *Proxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		p.mu.Lock()
		cut := p.cut
		p.mu.Unlock()
		if cut {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// Blackhole cuts the proxy: from now on it answers nothing, on new and
// existing connections alike.
func (p *Proxy) Blackhole() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Close closes the listener and every connection, and waits for the
// proxy's goroutines. It may be called more than once.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
