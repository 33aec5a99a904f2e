package clustertest_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestAutoProbeFailsLoudly: with PubSubAuto, a client of a cluster asks
// it whether sharded pub/sub exists, in the background: New returns at
// once, and operations wait for the answer under their own context. When
// the cluster cannot tell, because the ACL user may not ask or no node
// answers, operations fail and say so, rather than settle on global
// pub/sub, which clients that did learn it would never hear. With the
// mode set, nothing is asked and operations succeed.
func TestAutoProbeFailsLoudly(t *testing.T) {
	c := needCluster(t)
	bg := context.Background()
	const user, password = "relock-noprobe", "noprobe-password"
	rules := []any{"ACL", "SETUSER", user, "reset", "on", ">" + password, "~*", "&*", "-@all"}
	for _, cmd := range append(append([]string(nil), redistest.LockCommands...), redistest.ClusterCommands...) {
		if cmd != "pubsub|shardnumsub" {
			rules = append(rules, "+"+cmd)
		}
	}
	for _, s := range c.Live() {
		node := s.Client(t)
		if err := node.Do(bg, rules...).Err(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			node.Do(bg, "ACL", "DELUSER", user)
			node.Do(bg, "ACL", "LOG", "RESET")
		})
	}
	o := c.Options()
	o.Username, o.Password = user, password
	refused := redis.NewClusterClient(o)
	defer refused.Close()
	name := redistest.Key(t)
	auto := newClient(t, refused, nil)
	for range 2 {
		// Refused once, refused again: the refusal stands.
		if _, err := reentrant.New(auto, name, nil).TryLock(bg, 0); err == nil || !strings.Contains(err.Error(), "NOPERM") || !strings.Contains(err.Error(), "SHARDNUMSUB") {
			t.Fatalf("TryLock as a user who may not run PUBSUB SHARDNUMSUB = %v, want an error naming both", err)
		}
	}
	sharded := newClient(t, refused, &relock.Options{PubSub: relock.PubSubSharded})
	mu := reentrant.New(sharded, name, nil)
	lctx, err := mu.TryLock(bg, 0)
	if err != nil {
		t.Fatalf("TryLock with PubSubSharded set = %v", err)
	}
	if err := mu.Unlock(lctx); err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	gone := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{closed}, MaxRetries: -1})
	defer gone.Close()
	start := time.Now()
	unreachable := newClient(t, gone, nil)
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("New on an unreachable cluster took %v, want no wait", took)
	}
	ctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	if _, err := reentrant.New(unreachable, name, nil).Lock(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock on an unreachable cluster = %v, want its context's deadline", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Lock on an unreachable cluster took %v, want its context's 200ms", took)
	}
	if _, err := reentrant.New(unreachable, name, nil).TryLock(bg, 0); err == nil || errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("TryLock on an unreachable cluster = %v, want its connection error", err)
	}
}
