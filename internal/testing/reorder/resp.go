package reorder

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on what the proxy parses, Redis's own where it has one: a
// larger value is a protocol error, not an allocation.
const (
	maxInline = 64 << 10  // a line from a client: an inline command, a header
	maxBulk   = 512 << 20 // proto-max-bulk-len; also a line of a reply
	maxDepth  = 1000      // nesting of aggregates in a reply
)

var errProtocol = errors.New("reorder: protocol error")

// readLine reads a line of at most limit bytes, its "\n" included, into
// a fresh slice.
func readLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		line = append(line, frag...)
		switch {
		case len(line) > limit:
			return nil, fmt.Errorf("%w: line longer than %d bytes", errProtocol, limit)
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil:
			return nil, err
		}
		return line, nil
	}
}

// header parses a RESP header line ("$5\r\n", "*-1\r\n"): its type byte
// and its length.
func header(line []byte) (byte, int, error) {
	body, ok := bytes.CutSuffix(line, []byte("\r\n"))
	if !ok || len(body) < 2 {
		return 0, 0, fmt.Errorf("%w: header %q", errProtocol, line)
	}
	n, err := strconv.Atoi(string(body[1:]))
	if err != nil || n < -1 || n > maxBulk {
		return 0, 0, fmt.Errorf("%w: header %q", errProtocol, line)
	}
	return body[0], n, nil
}

// readCommand reads one command from a client: an array of bulk strings
// or an inline command. It returns the command's bytes as sent, to
// forward unchanged, and its arguments. An empty array or an empty
// inline line, which Redis skips without a reply, has no arguments.
func readCommand(r *bufio.Reader) (raw []byte, args []string, err error) {
	raw, err = readLine(r, maxInline)
	if err != nil {
		return nil, nil, err
	}
	if raw[0] != '*' {
		return raw, strings.Fields(string(raw)), nil
	}
	_, n, err := header(raw)
	if err != nil {
		return nil, nil, err
	}
	for range n {
		line, err := readLine(r, maxInline)
		if err != nil {
			return nil, nil, err
		}
		typ, size, err := header(line)
		if err != nil || typ != '$' || size < 0 {
			return nil, nil, fmt.Errorf("%w: expected a bulk string, got %q", errProtocol, line)
		}
		raw = append(raw, line...)
		start := len(raw)
		raw = append(raw, make([]byte, size+2)...)
		if _, err := io.ReadFull(r, raw[start:]); err != nil {
			return nil, nil, err
		}
		if !bytes.HasSuffix(raw, []byte("\r\n")) {
			return nil, nil, fmt.Errorf("%w: bulk string not ended by CRLF", errProtocol)
		}
		args = append(args, string(raw[start:start+size]))
	}
	return raw, args, nil
}

// A replyReader reads replies from the server, RESP2 and RESP3, as units
// to pass on or drop whole: a value with the attributes before it.
type replyReader struct {
	r   *bufio.Reader
	buf []byte // the bytes of the unit being read
}

// next reads one unit and returns its bytes, and whether its value is a
// push (an out-of-band message, the reply to no command).
func (rr *replyReader) next() (raw []byte, push bool, err error) {
	rr.buf = nil
	typ, err := rr.value(0)
	if err != nil {
		return nil, false, err
	}
	return rr.buf, typ == '>', nil
}

// value reads one value, with the attributes before it, and returns its
// type byte.
func (rr *replyReader) value(depth int) (byte, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("%w: reply nested deeper than %d", errProtocol, maxDepth)
	}
	line, err := readLine(rr.r, maxBulk)
	if err != nil {
		return 0, err
	}
	rr.buf = append(rr.buf, line...)
	switch typ := line[0]; typ {
	case '+', '-', ':', '_', ',', '#', '(':
		// Simple string, error, integer, null, double, boolean, big
		// number: the line is the value.
		return typ, nil
	case '$', '!', '=':
		// Bulk string, blob error, verbatim string; "$-1" is RESP2's null.
		_, n, err := header(line)
		if err != nil || n < 0 {
			return typ, err
		}
		start := len(rr.buf)
		rr.buf = append(rr.buf, make([]byte, n+2)...)
		if _, err := io.ReadFull(rr.r, rr.buf[start:]); err != nil {
			return 0, err
		}
		return typ, nil
	case '*', '~', '>', '%', '|':
		// Array, set, push, map, attribute; "*-1" is RESP2's null.
		_, n, err := header(line)
		if err != nil || n < 0 {
			return typ, err
		}
		if typ == '%' || typ == '|' {
			n *= 2
		}
		for range n {
			if _, err := rr.value(depth + 1); err != nil {
				return 0, err
			}
		}
		if typ == '|' {
			// An attribute is no value of its own: it annotates the
			// value that follows, which is part of the same unit.
			return rr.value(depth)
		}
		return typ, nil
	}
	return 0, fmt.Errorf("%w: reply type %q", errProtocol, line[0])
}

// subscriptions are the commands whose reply is a push under RESP3.
var subscriptions = map[string]bool{
	"subscribe": true, "unsubscribe": true,
	"psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true,
}

// pushKind returns the lower-cased first element of a push ("subscribe",
// "message"), or "" when raw is no push of a string first.
func pushKind(raw []byte) string {
	if len(raw) == 0 || raw[0] != '>' {
		return ""
	}
	_, rest, _ := bytes.Cut(raw, []byte("\r\n"))
	first, rest, ok := bytes.Cut(rest, []byte("\r\n"))
	switch {
	case !ok || len(first) == 0:
		return ""
	case first[0] == '+':
		return strings.ToLower(string(first[1:]))
	case first[0] != '$':
		return ""
	}
	n, err := strconv.Atoi(string(first[1:]))
	if err != nil || n < 0 || n > len(rest) {
		return ""
	}
	return strings.ToLower(string(rest[:n]))
}
