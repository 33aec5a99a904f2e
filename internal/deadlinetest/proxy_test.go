package deadlinetest_test

import (
	"testing"

	"github.com/relock-go/relock/internal/testing/blackhole"
)

// A proxy forwards loopback connections to a redis-server until it is
// cut: then it either black-holes (Blackhole: accepts connections, reads
// and discards what they send, answers nothing: a server that hangs, or
// a network that drops every packet) or refuses (Refuse: its listener
// and every connection are closed: nothing listens).
type proxy struct{ *blackhole.Proxy }

// newProxy starts a proxy to target, stopped when tb ends.
func newProxy(tb testing.TB, target string) *proxy {
	tb.Helper()
	p, err := blackhole.Start(target)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	return &proxy{p}
}

// Refuse closes the listener and every connection: nothing listens on
// the proxy's port any more.
func (p *proxy) Refuse() { p.Close() }
