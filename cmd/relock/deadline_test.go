package main_test

import (
	"net"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/blackhole"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestTimeoutBoundsEveryCommand runs each command with -timeout 300ms
// against a port where nothing listens, a server that accepts
// connections and never answers, and a frozen redis-server: each fails
// (exit 1, saying it cannot reach Redis) within the timeout, not after
// go-redis's own read timeouts and retries.
func TestTimeoutBoundsEveryCommand(t *testing.T) {
	const timeout = 300 * time.Millisecond
	// The process starts, and Go's runtime with it, before the timeout
	// runs: a loaded CI machine needs the slack.
	const slack = 1500 * time.Millisecond
	refused := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	hole := silent(t)
	frozen := redistest.Start(t)
	frozen.RequireReal(t)
	if err := frozen.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = frozen.Resume() })
	for _, target := range []struct{ name, addr string }{
		{"refused", refused}, {"blackhole", hole}, {"frozen", frozen.Addr},
	} {
		for _, args := range [][]string{
			{"inspect", "x"},
			{"list"},
			{"watch", "-count", "1", "x"},
			{"force-unlock", "-yes", "x"},
		} {
			t.Run(target.name+"/"+args[0], func(t *testing.T) {
				t.Parallel()
				r := cli(t, "", append([]string{"-url", "redis://" + target.addr, "-timeout", timeout.String()}, args...)...)
				t.Logf("took %v", r.took.Round(time.Millisecond))
				fails(t, r, 1, "cannot reach Redis")
				if r.took > timeout+slack {
					t.Errorf("took %v with -timeout %v", r.took, timeout)
				}
			})
		}
	}
}

// silent returns the address of a server that accepts connections and
// reads what they send without ever answering, until t ends: a proxy cut
// before anyone could connect, so its target is never dialled.
func silent(t *testing.T) string {
	t.Helper()
	p, err := blackhole.Start("127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	p.Blackhole()
	t.Cleanup(p.Close)
	return p.Addr()
}
