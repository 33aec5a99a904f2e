package hub_test

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
)

// These tests run in a testing/synctest bubble on miniredis, whose fake
// clock lets the hub's health checks (one per 15 silent seconds) run for
// minutes in milliseconds.

// A conn counts the PINGs written to miniredis and can go silent: while
// silent it swallows writes, so the server never answers, as with a dead
// peer behind a dropped route.
type conn struct {
	net.Conn
	d *dialer
}

func (c *conn) Write(p []byte) (int, error) {
	c.d.mu.Lock()
	silent := c.d.silent[c]
	c.d.pings += bytes.Count(bytes.ToLower(p), []byte("\r\nping\r\n"))
	c.d.mu.Unlock()
	if silent {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

type dialer struct {
	m      *miniredis.Miniredis
	mu     sync.Mutex
	conns  []*conn
	silent map[*conn]bool
	pings  int
}

func (d *dialer) dial(context.Context, string, string) (net.Conn, error) {
	nc, err := d.m.Dial()
	if err != nil {
		return nil, err
	}
	c := &conn{Conn: nc, d: d}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.conns = append(d.conns, c)
	return c, nil
}

func (d *dialer) stats() (dials, pings int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns), d.pings
}

// silence makes connection i silent.
func (d *dialer) silence(i int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.silent[d.conns[i]] = true
}

// bubbleHub returns, inside a bubble, a hub on a fresh miniredis whose
// connections d tracks, and a client to publish with; all close when the
// bubble's test ends.
func bubbleHub(t *testing.T) (*hub.Hub, *redis.Client, *dialer, *miniredis.Miniredis) {
	t.Helper()
	m := miniredis.NewMiniRedis()
	t.Cleanup(m.Close)
	d := &dialer{m: m, silent: make(map[*conn]bool)}
	// The address is never dialled; an IP literal keeps go-redis from
	// resolving a host name, which cannot run in a bubble.
	const addr = "127.0.0.1:6379"
	rdb := redis.NewClient(&redis.Options{Addr: addr, Dialer: d.dial})
	t.Cleanup(func() { rdb.Close() })
	pub := redis.NewClient(&redis.Options{Addr: addr, Dialer: func(context.Context, string, string) (net.Conn, error) {
		return m.Dial()
	}})
	t.Cleanup(func() { pub.Close() })
	h := hub.New(rdb, false, nil)
	t.Cleanup(func() { h.Close() })
	return h, pub, d, m
}

// An idle hub stays subscribed for minutes: its health-check pings are
// answered, so they neither wake waiters nor reconnect.
func TestIdleHub(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, pub, d, m := bubbleHub(t)
		ctx := context.Background()
		s := subscribe(t, h, "idle")
		dials, pings := d.stats()

		const idle = 10 * time.Minute
		for range idle / (5 * time.Second) {
			time.Sleep(5 * time.Second)
			synctest.Wait()
			if pending(s) {
				t.Fatal("idle waiter woken")
			}
		}
		dials2, pings2 := d.stats()
		// One health check per 15 silent seconds: 40 in 10 minutes.
		if n := pings2 - pings; n < 30 || n > 41 {
			t.Fatalf("%d health-check pings in %v, want about %d", n, idle, idle/(15*time.Second))
		}
		if dials2 != dials {
			t.Fatalf("the hub dialled %d times while idle, want 0", dials2-dials)
		}
		if n := m.PubSubNumSub("idle")["idle"]; n != 1 {
			t.Fatalf("NUMSUB after %v idle = %d, want 1", idle, n)
		}
		if err := pub.Publish(ctx, "idle", "0").Err(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !pending(s) {
			t.Fatalf("waiter not woken by a message after %v idle", idle)
		}
	})
}

// A connection that goes silent (the server no longer answers, yet nothing
// closes it) is found by the health check, its waiters are woken, and the
// hub resubscribes on a new connection.
func TestSilentConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, pub, d, m := bubbleHub(t)
		ctx := context.Background()
		s := subscribe(t, h, "silent")
		dials, _ := d.stats()
		if dials != 1 {
			t.Fatalf("dials = %d, want 1", dials)
		}
		d.silence(0)
		start := time.Now()
		synctest.Wait()

		var woke time.Duration
		for woke == 0 {
			time.Sleep(time.Second)
			synctest.Wait()
			if pending(s) {
				woke = time.Since(start)
			}
			if time.Since(start) > 2*time.Minute {
				t.Fatal("silent connection not detected in 2 minutes")
			}
		}
		// Detection takes a silent interval, a ping and a second
		// silent interval: 30 s with a 15 s health interval.
		if woke < 15*time.Second || woke > 45*time.Second {
			t.Fatalf("waiter woken %v after the connection went silent, want 15s..45s", woke)
		}
		time.Sleep(10 * time.Second) // backoff and resubscribe
		synctest.Wait()
		pending(s)
		if dials, _ := d.stats(); dials != 2 {
			t.Fatalf("dials = %d, want 2 (one reconnect)", dials)
		}
		if n := m.PubSubNumSub("silent")["silent"]; n != 1 {
			t.Fatalf("NUMSUB after reconnect = %d, want 1", n)
		}
		if err := pub.Publish(ctx, "silent", "0").Err(); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !pending(s) {
			t.Fatal("waiter not woken by a message after the reconnect")
		}
	})
}
