package clustertest_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/redistest"
)

// TestAutoProbeFailsLoudly: with PubSubAuto, New asks a cluster client
// whether sharded pub/sub exists. When it cannot tell, because the ACL
// user may not ask or no node answers, New fails and says so, rather than
// settle on global pub/sub, which clients that did learn it would never
// hear. With the mode set, New asks nothing and succeeds.
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
	if _, err := relock.New(refused, nil); err == nil || !strings.Contains(err.Error(), "NOPERM") || !strings.Contains(err.Error(), "SHARDNUMSUB") {
		t.Fatalf("New as a user who may not run PUBSUB SHARDNUMSUB = %v, want an error naming both", err)
	}
	rc, err := relock.New(refused, &relock.Options{PubSub: relock.PubSubSharded})
	if err != nil {
		t.Fatalf("New with PubSubSharded set = %v", err)
	}
	rc.Close()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	gone := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{closed}, MaxRetries: -1})
	defer gone.Close()
	if _, err := relock.New(gone, nil); err == nil || errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("New on an unreachable cluster = %v, want its connection error", err)
	}
}
