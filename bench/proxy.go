package main

import (
	"io"
	"net"
	"sync"
)

// A proxy stands between clients and the benchmark's redis-server on a
// loopback port of its own, for scenario (o). It forwards both ways
// until it is cut; from then on it reads and discards whatever either
// side sends, on the connections it has and on those it accepts later:
// a server that accepts connections and never answers.
type proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex // guards cut, conns and closed
	cut    bool
	conns  map[net.Conn]struct{} // both sides of every pair, closed by stop
	closed bool

	wg sync.WaitGroup // the accept loop and a copier per direction of each pair
}

// startProxy starts a proxy to target on a free loopback port.
func startProxy(target string) (*proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &proxy{ln: ln, target: target, conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// addr is the address clients dial.
func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // stop closed the listener
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

// track records c, for stop to close, and returns whether the proxy is
// cut; once the proxy is stopped it closes c and reports false.
func (p *proxy) track(c net.Conn) (cut, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false, false
	}
	p.conns[c] = struct{}{}
	return p.cut, true
}

// pair connects c to the server and copies each way until a side
// closes, then closes both.
func (p *proxy) pair(c net.Conn) {
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
func (p *proxy) copy(dst io.Writer, src io.Reader) {
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

// blackhole cuts the proxy: from now on it answers nothing.
func (p *proxy) blackhole() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// stop closes the listener and every connection, and waits for the
// proxy's goroutines.
func (p *proxy) stop() {
	p.ln.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
