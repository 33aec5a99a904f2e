package faulttest_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// A splitClient is a go-redis client whose connections go through one of
// two proxies: its subscription connection through sub, everything else
// through cmd, so that a fault can hit one and not the other. go-redis
// dials through Options.Dialer for both; the next dial after SubNext goes
// to sub, every other to cmd.
type splitClient struct {
	*redis.Client
	cmd, sub *proxy
	subNext  atomic.Bool
	Name     string // CLIENT SETNAME of its connections
}

// subscriber returns the server's id for the connection of client name
// that has subscriptions, or "" if there is none.
func subscriber(t *testing.T, raw *redis.Client, name string) string {
	t.Helper()
	list, err := raw.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(list, "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if f["name"] == name && f["sub"] != "" && f["sub"] != "0" {
			return f["id"]
		}
	}
	return ""
}

func newSplitClient(t *testing.T) *splitClient {
	t.Helper()
	s := &splitClient{cmd: newProxy(t), sub: newProxy(t)}
	s.Name = "relock-fault-split-" + strconv.FormatInt(clientNames.Add(1), 10)
	// Retries off and deadlines on: relock sends its acquires through
	// this client rather than a copy, which would share the dialer and
	// could take the subscription's turn.
	s.Client = redis.NewClient(&redis.Options{
		Addr:                  s.cmd.Addr,
		ClientName:            s.Name,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		Dialer: func(ctx context.Context, network, _ string) (net.Conn, error) {
			addr := s.cmd.Addr
			if s.subNext.CompareAndSwap(true, false) {
				addr = s.sub.Addr
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	})
	t.Cleanup(func() { s.Client.Close() })
	return s
}

// checkedEviction makes one acquire attempt that fails (try) and waits
// for the client's one check of the master's eviction policy, which that
// first attempt starts in the background when replica sync is off (INFO
// memory): the check could otherwise dial the connection meant for the
// waiter's subscription. A failed attempt holds nothing, so the client
// does not subscribe to its notices yet. The check is seen as a
// connection of s whose last command is INFO; a later command on that
// connection may hide it, so the wait gives up quietly after 2s, by when
// a check on loopback has long returned.
func checkedEviction(t *testing.T, raw *redis.Client, s *splitClient, try func() error) {
	t.Helper()
	if err := try(); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("the warm-up attempt: %v, want ErrNotAcquired", err)
	}
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range strings.Split(raw.ClientList(context.Background()).Val(), "\n") {
			if strings.Contains(line, " name="+s.Name+" ") && strings.Contains(line, " cmd=info") {
				return
			}
		}
	}
}

// TestResetMidWait: a waiter whose connection is reset while it waits
// still gets the lock soon after the holder unlocks, well before the
// holder's 30s lease could run out.
//
//   - subscription: the waiter's subscription connection is reset (by a
//     message on it) while the lock is still held. The hub reconnects and
//     subscribes again; the holder's release message then arrives on the
//     new connection.
//   - release lost: the reset hits the release message itself, which is
//     lost; the hub's wake-up of every waiter on the broken connection
//     makes the waiter retry.
//   - command: the waiter's command connection is reset by the acquire
//     it sends on being woken (the request is dropped, not run); go-redis
//     and the wait loop retry until the reset is disarmed 300ms later.
func TestResetMidWait(t *testing.T) {
	requireReal(t)
	for _, tc := range []struct {
		name string
		// arm runs while the waiter waits and the lock is held; it
		// returns what disarms the fault.
		arm func(t *testing.T, s *splitClient, name string) (disarm func())
		// afterUnlock runs right after the holder's unlock.
		afterUnlock func(t *testing.T, disarm func())
	}{
		{
			name: "subscription",
			arm: func(t *testing.T, s *splitClient, name string) func() {
				raw := newRedis(t, srv.Addr)
				old := subscriber(t, raw, s.Name)
				if old == "" {
					t.Fatal("no subscription connection")
				}
				must(t, s.sub.Reset("downstream"))
				// Any message on the waiter's channels trips the reset; a
				// waiter woken by it finds the lock held and waits again.
				for _, ch := range lockChannels(raw, name) {
					if err := raw.Publish(context.Background(), ch, "1").Err(); err != nil {
						t.Fatal(err)
					}
				}
				redistest.Eventually(t, 5*time.Second, "subscription connection reset", func() bool {
					return !strings.Contains(raw.ClientList(context.Background()).Val(), "id="+old+" ")
				})
				must(t, s.sub.Disarm("downstream"))
				// The hub's new connection goes through cmd (no fault).
				// go-redis resubscribes at once on a connection that the
				// hub then replaces after its first backoff (50ms): wait
				// that out, so the release goes to the hub's connection.
				waitSubscribed(t, raw, name, 1)
				time.Sleep(300 * time.Millisecond)
				waitSubscribed(t, raw, name, 1)
				return func() {}
			},
			afterUnlock: func(*testing.T, func()) {},
		},
		{
			name: "release lost",
			arm: func(t *testing.T, s *splitClient, _ string) func() {
				must(t, s.sub.Reset("downstream"))
				return func() { must(t, s.sub.Disarm("downstream")) }
			},
			afterUnlock: func(t *testing.T, disarm func()) {
				time.Sleep(300 * time.Millisecond)
				disarm()
			},
		},
		{
			name: "command",
			arm: func(t *testing.T, s *splitClient, _ string) func() {
				must(t, s.cmd.Reset("upstream"))
				return func() { must(t, s.cmd.Disarm("upstream")) }
			},
			afterUnlock: func(t *testing.T, disarm func()) {
				time.Sleep(300 * time.Millisecond)
				disarm()
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bg := context.Background()
			name := redistest.Key(t)
			raw := newRedis(t, srv.Addr)
			holder := reentrant.New(newClient(t, srv.Addr, nil), name, nil)
			hctx, err := holder.Lock(bg)
			if err != nil {
				t.Fatal(err)
			}

			s := newSplitClient(t)
			if err := s.Ping(bg).Err(); err != nil { // the command connection, through cmd
				t.Fatal(err)
			}
			// Replica sync off: its first read of the master's replicas
			// could dial the connection meant for the subscription.
			rc, err := relock.New(s.Client, &relock.Options{Logger: quiet, SyncReplicas: relock.SyncOff})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { rc.Close() })
			waiter := reentrant.New(rc, name, nil)
			checkedEviction(t, raw, s, func() error { _, err := waiter.TryLock(bg, 0); return err })
			s.subNext.Store(true) // the waiter's subscription, through sub
			type result struct {
				ctx context.Context
				at  time.Time
				err error
			}
			got := make(chan result, 1)
			go func() {
				ctx, err := waiter.Lock(bg)
				got <- result{ctx, time.Now(), err}
			}()
			waitSubscribed(t, raw, name, 1)
			if s.subNext.Load() {
				t.Fatal("the waiter subscribed without dialing through the sub proxy")
			}

			disarm := tc.arm(t, s, name)
			released := time.Now()
			if err := holder.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			tc.afterUnlock(t, disarm)
			var r result
			select {
			case r = <-got:
			case <-time.After(10 * time.Second):
				t.Fatalf("waiter did not get the lock within 10s of the release (lease 30s); lock %v", raw.HGetAll(bg, name).Val())
			}
			if r.err != nil {
				t.Fatal(r.err)
			}
			took := r.at.Sub(released)
			t.Logf("waiter got the lock %v after the release", took.Round(time.Millisecond))
			if took > 5*time.Second {
				t.Errorf("waiter got the lock %v after the release: it slept instead of being woken", took)
			}
			if err := waiter.Unlock(r.ctx); err != nil {
				t.Fatal(err)
			}
			if n := raw.Exists(bg, name).Val(); n != 0 {
				t.Errorf("lock still held after the waiter's only Unlock: %v", raw.HGetAll(bg, name).Val())
			}
			if errors.Is(context.Cause(r.ctx), relock.ErrLockLost) {
				t.Errorf("waiter's hold ended as lost: %v", context.Cause(r.ctx))
			}
		})
	}
}
