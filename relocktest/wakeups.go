package relocktest

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/relock-go/relock/internal/layout"
)

// A conn is one of the Kit's Client's connections. It passes what it
// reads on whole RESP frames at a time, leaving out the pub/sub messages
// DropWakeups drops, so that the go-redis reader never sees them. Reads
// are made by one goroutine at a time (go-redis's), concurrently with
// writes.
//
// Messages come as RESP3 push frames, which no reply is; on a server
// that only speaks RESP2 they are arrays like replies, so a connection
// looks at arrays only once it has sent a SUBSCRIBE or SSUBSCRIBE.
type conn struct {
	net.Conn
	f          *faults
	subscriber atomic.Bool

	// Read's state.
	raw bool   // a frame this parser does not know: pass bytes on as read
	buf []byte // what one read of Conn gets
	in  []byte // read, not yet a whole frame
	out []byte // whole frames for the reader, from off on
	off int
}

func (c *conn) Write(p []byte) (int, error) {
	if !c.subscriber.Load() && subscribes(p) {
		c.subscriber.Store(true)
	}
	return c.Conn.Write(p)
}

func (c *conn) Read(p []byte) (int, error) {
	for c.off == len(c.out) {
		if c.raw && len(c.in) == 0 {
			return c.Conn.Read(p)
		}
		if c.buf == nil {
			c.buf = make([]byte, 16<<10)
		}
		c.out, c.off = c.out[:0], 0
		n, err := c.Conn.Read(c.buf)
		c.in = append(c.in, c.buf[:n]...)
		c.scan()
		if err != nil && c.off == len(c.out) {
			return 0, err
		}
	}
	n := copy(p, c.out[c.off:])
	c.off += n
	return n, nil
}

// scan moves the whole frames of in to out, leaving out those dropped.
func (c *conn) scan() {
	i := 0
	for i < len(c.in) {
		if c.raw {
			c.out = append(c.out, c.in[i:]...)
			i = len(c.in)
			break
		}
		n, err := frameLen(c.in[i:])
		if errors.Is(err, errShort) {
			break
		}
		if err != nil {
			c.raw = true
			continue
		}
		frame := c.in[i : i+n]
		if !c.drop(frame) {
			c.out = append(c.out, frame...)
		}
		i += n
	}
	c.in = append(c.in[:0], c.in[i:]...)
}

// drop reports whether frame is a message to drop, taking it from
// DropWakeups' count.
func (c *conn) drop(frame []byte) bool {
	if !c.f.pending() {
		return false
	}
	channel, payload, ok := message(frame, c.subscriber.Load())
	// A notice tells of a lost lock, and an echo mark ("=<count>") that
	// the count after it wakes no one: neither is a wake-up.
	if !ok || strings.HasPrefix(channel, layout.ClientChannels) || strings.HasPrefix(payload, "=") {
		return false
	}
	return c.f.dropping()
}

var (
	errShort = errors.New("relocktest: incomplete frame")
	errFrame = errors.New("relocktest: unknown frame")
	crlf     = []byte("\r\n")
)

// frameLen returns the length of the RESP2 or RESP3 frame that b starts
// with: errShort when b holds only part of it, errFrame when it is not
// one this parser knows.
func frameLen(b []byte) (int, error) {
	end := bytes.Index(b, crlf)
	if end < 0 {
		return 0, errShort
	}
	if end == 0 {
		return 0, errFrame
	}
	n := end + 2
	switch b[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return n, nil
	case '$', '=', '!', '*', '~', '>', '%', '|':
	default:
		return 0, errFrame
	}
	size, err := strconv.Atoi(string(b[1:end]))
	if err != nil {
		return 0, errFrame
	}
	switch b[0] {
	case '$', '=', '!':
		if size < 0 {
			return n, nil
		}
		if len(b) < n+size+2 {
			return 0, errShort
		}
		if !bytes.Equal(b[n+size:n+size+2], crlf) {
			return 0, errFrame
		}
		return n + size + 2, nil
	case '%', '|':
		size *= 2
	}
	for range max(size, 0) {
		m, err := frameLen(b[n:])
		if err != nil {
			return 0, err
		}
		n += m
	}
	return n, nil
}

// message returns the channel and payload of frame, a whole frame, if it
// is a pub/sub message: a push (or, on a subscriber's RESP2 connection,
// an array) of "message" or "smessage", the channel and the payload.
func message(frame []byte, subscriber bool) (channel, payload string, ok bool) {
	if !bytes.HasPrefix(frame, []byte(">3\r\n")) && !(subscriber && bytes.HasPrefix(frame, []byte("*3\r\n"))) {
		return "", "", false
	}
	var parts [3]string
	rest := frame[4:]
	for i := range parts {
		end := bytes.Index(rest, crlf)
		if end < 1 || rest[0] != '$' {
			return "", "", false
		}
		size, err := strconv.Atoi(string(rest[1:end]))
		if err != nil || size < 0 || len(rest) < end+4+size {
			return "", "", false
		}
		parts[i] = string(rest[end+2 : end+2+size])
		rest = rest[end+2+size+2:]
	}
	if kind := strings.ToLower(parts[0]); kind != "message" && kind != "smessage" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// subscribes reports whether p, written to a connection, holds a
// SUBSCRIBE or SSUBSCRIBE command, as go-redis spells them.
func subscribes(p []byte) bool {
	return bytes.Contains(p, []byte("\r\n$9\r\nsubscribe\r\n")) ||
		bytes.Contains(p, []byte("\r\n$10\r\nssubscribe\r\n"))
}
