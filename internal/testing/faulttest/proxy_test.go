package faulttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
)

// A proxy is a toxiproxy TCP proxy on a free loopback port in front of
// the shared redis-server, used in-process as a library. Toxics apply to
// every connection through it, those open when they are added and those
// opened later.
//
// The faults used here:
//   - partition: a "timeout" toxic with timeout 0 in both directions, a
//     black hole: bytes are dropped, connections stay open and new ones
//     are accepted but hear nothing. Healing removes the toxics, which
//     closes the connections that were open (toxiproxy's Cleanup of a
//     timeout toxic), as a real partition long enough to time out TCP
//     would; clients reconnect.
//   - latency: a "latency" toxic in both directions, latency +/- jitter
//     per chunk, order preserved.
//   - reset: a "reset_peer" toxic in one direction: the next chunk in
//     that direction closes the connection instead of passing.
type proxy struct {
	p    *toxiproxy.Proxy
	Addr string

	// mu serializes changes of the toxics, so that remove-and-add
	// sequences (setting a new latency) are not interleaved.
	mu          sync.Mutex
	partitioned bool
	latency     bool
}

var (
	apiOnce sync.Once
	api     *toxiproxy.ApiServer
)

// newProxy starts a proxy to the shared server, stopped when tb ends.
func newProxy(tb testing.TB) *proxy {
	tb.Helper()
	apiOnce.Do(func() {
		// The API server is only a home for proxies here: it never
		// listens (no HTTP), and logs nothing.
		api = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	})
	p := toxiproxy.NewProxy(api, tb.Name(), "127.0.0.1:0", srv.Addr)
	if err := p.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Stop)
	return &proxy{p: p, Addr: p.Listen}
}

func (x *proxy) add(name, typ, stream string, attrs map[string]any) error {
	b, err := json.Marshal(map[string]any{"name": name, "type": typ, "stream": stream, "attributes": attrs})
	if err != nil {
		return err
	}
	if _, err := x.p.Toxics.AddToxicJson(strings.NewReader(string(b))); err != nil {
		return fmt.Errorf("proxy %s: add %s toxic %s: %w", x.Addr, typ, name, err)
	}
	return nil
}

func (x *proxy) remove(name string) error {
	if err := x.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		return fmt.Errorf("proxy %s: remove toxic %s: %w", x.Addr, name, err)
	}
	return nil
}

// Partition black-holes the proxy in both directions. The upstream
// toxic goes first, so no request reaches the server once the reply
// path is cut.
func (x *proxy) Partition() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.partitioned {
		return nil
	}
	x.partitioned = true
	return errors.Join(
		x.add("blackhole_up", "timeout", "upstream", map[string]any{"timeout": 0}),
		x.add("blackhole_down", "timeout", "downstream", map[string]any{"timeout": 0}))
}

// Heal ends a partition; the connections open during it are closed.
func (x *proxy) Heal() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.partitioned {
		return nil
	}
	x.partitioned = false
	return errors.Join(x.remove("blackhole_up"), x.remove("blackhole_down"))
}

// Down stops the proxy: its connections are closed and new ones are
// refused, as when a host's network is down. Up starts it again on the
// same address.
func (x *proxy) Down() { x.p.Stop() }

// Up ends Down.
func (x *proxy) Up() error { return x.p.Start() }

// SetLatency delays every chunk in both directions by latency +/- jitter
// (so a round trip costs about twice latency); 0 removes the delay.
func (x *proxy) SetLatency(latency, jitter time.Duration) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.latency {
		x.latency = false
		if err := errors.Join(x.remove("latency_up"), x.remove("latency_down")); err != nil {
			return err
		}
	}
	if latency <= 0 {
		return nil
	}
	x.latency = true
	attrs := map[string]any{"latency": latency.Milliseconds(), "jitter": jitter.Milliseconds()}
	return errors.Join(
		x.add("latency_up", "latency", "upstream", attrs),
		x.add("latency_down", "latency", "downstream", attrs))
}

// Reset arms a reset in one direction ("upstream": client to server,
// "downstream": server to client): the next chunk sent that way on any
// connection closes that connection. Disarm removes it.
func (x *proxy) Reset(stream string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.add("reset_"+stream, "reset_peer", stream, map[string]any{"timeout": 0})
}

// Disarm removes the reset armed by Reset(stream).
func (x *proxy) Disarm(stream string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.remove("reset_" + stream)
}

// must fails tb on a proxy error; for the test's own goroutine.
func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}
