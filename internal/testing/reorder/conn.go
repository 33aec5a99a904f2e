package reorder

import (
	"bufio"
	"net"
	"sync"
	"time"
)

// A conn is a client connection and the server connection the proxy
// opened for it. Three goroutines serve it: readCommands reads the
// client's commands into queue, forward writes them to the server when
// their time comes and moves them to pending, and readReplies matches
// the server's replies to pending, in order, and passes them back. The
// server connection is closed once the client has closed, queue is
// empty and pending too: a held command outlives its client.
type conn struct {
	p      *Proxy
	n      int      // Cmd.Conn
	client net.Conn // read by readCommands, written by readReplies
	server net.Conn // set before the goroutines start, under p.mu

	// Under p.mu. Invariant: queue is ordered by at, so forwarding it
	// in order keeps the client's order.
	queue    []*command // read from the client, not yet forwarded
	pending  []*command // forwarded, their replies not yet read
	readDone bool       // readCommands is done: nothing more joins queue
	sent     bool       // forward is done: queue is empty for good
	broken   bool       // a side failed or the proxy closed: drop everything

	wake chan struct{} // capacity 1: forward has something new to look at
}

// A command is a command read from the client.
type command struct {
	raw  []byte    // as the client sent it
	at   time.Time // when to forward it, under p.mu
	drop bool      // Action.DropReply
	// sub names a SUBSCRIBE-like command, whose RESP3 reply is a push
	// of that name.
	sub string
}

// poke wakes forward; it does not block.
func (c *conn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// serve dials the target and serves c until both sides are done.
func (p *Proxy) serve(c *conn) {
	defer func() {
		p.mu.Lock()
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	d := net.Dialer{Timeout: dialTimeout}
	server, err := d.DialContext(p.ctx, "tcp", p.target)
	if err != nil {
		c.client.Close()
		return
	}
	p.mu.Lock()
	if p.closed { // Close has closed c.client
		p.mu.Unlock()
		server.Close()
		return
	}
	c.server = server
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(c.readCommands)
	wg.Go(c.readReplies)
	c.forward()
	wg.Wait()
	c.client.Close()
	server.Close()
}

// readCommands reads the client's commands, asks the rule about each
// and queues it, until the client closes or sends garbage.
func (c *conn) readCommands() {
	r := bufio.NewReader(c.client)
	for {
		raw, args, err := readCommand(r)
		if err != nil {
			break
		}
		if len(args) == 0 {
			continue // Redis skips it and answers nothing
		}
		// The command counts as held from before its rule sees it, so
		// that a Quiet the rule triggers waits for it.
		c.p.mu.Lock()
		c.p.held++
		c.p.mu.Unlock()
		a := c.p.decide(c.n, args)
		cmd := &command{raw: raw, at: time.Now().Add(max(a.Hold, 0)), drop: a.DropReply}
		if name := (Cmd{Args: args}).Name(); subscriptions[name] {
			cmd.sub = name
		}
		c.enqueue(cmd)
	}
	c.p.mu.Lock()
	c.readDone = true
	c.p.mu.Unlock()
	c.poke()
}

// enqueue queues cmd, counted in held already, after the commands read
// before it, or drops it when c is broken.
func (c *conn) enqueue(cmd *command) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.broken {
		p.held--
		p.settled()
		return
	}
	if n := len(c.queue); n > 0 && c.queue[n-1].at.After(cmd.at) {
		cmd.at = c.queue[n-1].at
	}
	c.queue = append(c.queue, cmd)
	c.poke()
}

// forward writes the queued commands to the server as their time comes,
// until the client is done and the queue empty, or c breaks.
func (c *conn) forward() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		batch, wait, done := c.due()
		if done {
			return
		}
		if len(batch) > 0 {
			if _, err := c.server.Write(batch); err != nil {
				c.breakDown()
				return
			}
			continue
		}
		var fire <-chan time.Time
		if wait > 0 {
			timer.Reset(wait)
			fire = timer.C
		}
		select {
		case <-c.p.ctx.Done():
			return
		case <-c.wake:
		case <-fire:
		}
	}
}

// due takes the commands at the head of the queue whose time has come
// and moves them to pending, before they are written, so that their
// replies find them. Otherwise it returns how long the head has to wait
// (0: until poked), or done.
func (c *conn) due() (batch []byte, wait time.Duration, done bool) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.broken {
		return nil, 0, true
	}
	now := time.Now()
	for len(c.queue) > 0 && !c.queue[0].at.After(now) {
		cmd := c.queue[0]
		c.queue = c.queue[1:]
		c.pending = append(c.pending, cmd)
		batch = append(batch, cmd.raw...)
		p.held--
		p.flight++
	}
	switch {
	case len(batch) > 0:
		return batch, 0, false
	case len(c.queue) > 0:
		return nil, c.queue[0].at.Sub(now), false
	case c.readDone:
		c.sent = true
		c.finish()
		return nil, 0, true
	}
	return nil, 0, false
}

// finish closes the server connection once nothing is left to send or
// to hear, which ends readReplies. It is called with p.mu held.
func (c *conn) finish() {
	if c.sent && len(c.pending) == 0 {
		c.server.Close()
	}
}

// readReplies reads the server's replies and passes each back, or drops
// it, until the server connection closes.
func (c *conn) readReplies() {
	rr := &replyReader{r: bufio.NewReader(c.server)}
	gone := false // the client is closed or cannot be written to
	for {
		raw, push, err := rr.next()
		if err != nil {
			c.breakDown()
			return
		}
		pass, drop := c.match(raw, push)
		switch {
		case drop:
			c.client.Close()
			gone = true
		case pass && !gone:
			if _, err := c.client.Write(raw); err != nil {
				gone = true // keep reading: held commands are still answered
			}
		}
	}
}

// match matches a reply to the oldest pending command. It reports
// whether to pass the reply on, or to drop it and close the client.
// Pushes match no command, but the push confirming a SUBSCRIBE-like
// command is its reply; a reply when nothing is pending is passed on.
func (c *conn) match(raw []byte, push bool) (pass, drop bool) {
	p := c.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(c.pending) == 0 {
		return true, false
	}
	head := c.pending[0]
	if push && (head.sub == "" || pushKind(raw) != head.sub) {
		return true, false
	}
	c.pending = c.pending[1:]
	p.flight--
	p.settled()
	c.finish()
	return !head.drop, head.drop
}

// breakDown gives up on c after a side failed or closed: it drops the
// commands queued and pending, and closes both sides, which ends the
// readers; forward sees broken.
func (c *conn) breakDown() {
	p := c.p
	p.mu.Lock()
	if !c.broken {
		c.broken = true
		p.held -= len(c.queue)
		p.flight -= len(c.pending)
		c.queue, c.pending = nil, nil
		p.settled()
	}
	p.mu.Unlock()
	c.client.Close()
	c.server.Close()
	c.poke()
}
