package main_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/redistest"
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
	hole := blackhole(t)
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

// blackhole listens on a loopback port, accepts connections and reads
// what they send without ever answering, until t ends.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex // guards conns
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(io.Discard, c)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}
