package blackhole_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/blackhole"
)

// echo starts a line echo server on loopback, closed when t ends.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends a line on c and reads the answer, giving up after wait.
func roundTrip(c net.Conn, wait time.Duration) (string, error) {
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte("ping\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(c).ReadString('\n')
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestProxy: the proxy forwards until Blackhole; then old and new
// connections hear nothing; after Close nothing listens.
func TestProxy(t *testing.T) {
	p, err := blackhole.Start(echo(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	old := dial(t, p.Addr())
	if got, err := roundTrip(old, 5*time.Second); err != nil || got != "ping\n" {
		t.Fatalf("before the cut: %q, %v; want the echo", got, err)
	}

	p.Blackhole()
	for name, c := range map[string]net.Conn{"old": old, "new": dial(t, p.Addr())} {
		got, err := roundTrip(c, 200*time.Millisecond)
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("%s connection after the cut: %q, %v; want no answer", name, got, err)
		}
	}

	p.Close()
	p.Close() // twice is fine
	if c, err := net.DialTimeout("tcp", p.Addr(), time.Second); err == nil {
		c.Close()
		t.Fatal("dial after Close succeeded, want refused")
	}
}
