package reorder_test

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/reorder"
)

// script is what the scripted server answers to each command: push, an
// out-of-band message, if any, then reply. Together they are every
// RESP2 and RESP3 type.
var script = []struct{ cmd, push, reply string }{
	{cmd: "simple", reply: "+OK\r\n"},
	{cmd: "error", reply: "-ERR bad\r\n"},
	{cmd: "integer", reply: ":42\r\n"},
	{cmd: "bulk", reply: "$5\r\nhello\r\n"},
	{cmd: "crlf", reply: "$4\r\n\r\n\r\n\r\n"},
	{cmd: "empty", reply: "$0\r\n\r\n"},
	{cmd: "nullbulk", reply: "$-1\r\n"},
	{cmd: "nullarray", reply: "*-1\r\n"},
	{cmd: "array", reply: "*3\r\n$1\r\na\r\n:1\r\n*0\r\n"},
	{cmd: "null", reply: "_\r\n"},
	{cmd: "double", reply: ",3.14\r\n"},
	{cmd: "boolean", reply: "#t\r\n"},
	{cmd: "blob", reply: "!9\r\nERR blob!\r\n"},
	{cmd: "verbatim", reply: "=15\r\ntxt:hello world\r\n"},
	{cmd: "bignumber", reply: "(12345678901234567890\r\n"},
	{cmd: "map", reply: "%2\r\n+k\r\n*1\r\n:1\r\n$1\r\nv\r\n_\r\n"},
	{cmd: "set", reply: "~2\r\n+a\r\n+b\r\n"},
	{cmd: "attribute", reply: "|1\r\n+ttl\r\n:3\r\n+attributed\r\n"},
	{cmd: "nested", reply: "*2\r\n|1\r\n+a\r\n%0\r\n:1\r\n:2\r\n"},
	{cmd: "push", push: ">2\r\n+message\r\n$1\r\nx\r\n", reply: "+after-push\r\n"},
	{cmd: "last", reply: "+last\r\n"},
}

// scripted starts a server on loopback that answers each command, an
// array of bulk strings or an inline command named in script, as script
// says. It stops when t ends.
func scripted(t *testing.T) string {
	t.Helper()
	answers := map[string]string{}
	for _, s := range script {
		answers[s.cmd] = s.push + s.reply
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					name, err := readName(r)
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, answers[name]); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

// readName reads a command and returns its name.
func readName(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(line, "*") {
		return strings.TrimSpace(line), nil
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	var name string
	for i := range 2 * n {
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		if i == 1 {
			name = strings.TrimSpace(line)
		}
	}
	return name, nil
}

// send writes every command of script on a new connection to addr, half
// of them inline, in one write, and returns what comes back until the
// proxy closes the connection.
func send(t *testing.T, addr string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	for i, s := range script {
		if i%2 == 0 {
			b.WriteString(s.cmd + "\r\n")
		} else {
			b.WriteString("*1\r\n$" + strconv.Itoa(len(s.cmd)) + "\r\n" + s.cmd + "\r\n")
		}
	}
	if err := c.SetDeadline(time.Now().Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	// Closing the write side ends the connection once everything sent
	// is answered: the proxy closes the client when its server is done.
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("reading replies: %v", err)
	}
	return string(got)
}

// TestWire passes every reply type through unchanged, and drops exactly
// the reply of each command in turn: attributes go with the value they
// precede and a push is the reply to no command.
func TestWire(t *testing.T) {
	addr := scripted(t)
	var all strings.Builder
	for _, s := range script {
		all.WriteString(s.push + s.reply)
	}
	p, err := reorder.Start(addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if got := send(t, p.Addr()); got != all.String() {
		t.Fatalf("passed through:\n%q\nwant\n%q", got, all.String())
	}

	for i, s := range script {
		t.Run(s.cmd, func(t *testing.T) {
			p, err := reorder.Start(addr, func(c reorder.Cmd) reorder.Action {
				return reorder.Action{DropReply: c.Args[0] == s.cmd}
			})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			var want strings.Builder
			for _, s := range script[:i] {
				want.WriteString(s.push + s.reply)
			}
			want.WriteString(s.push)
			if got := send(t, p.Addr()); got != want.String() {
				t.Fatalf("dropping the reply to %s passed:\n%q\nwant\n%q", s.cmd, got, want.String())
			}
		})
	}
}
