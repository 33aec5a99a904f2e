package hub_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/hub"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// records keeps the log records a handler is given.
type records struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

// attr returns attribute key of the first record at level with message
// msg, and whether there is one.
func (r *records) attr(level slog.Level, msg, key string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.recs {
		if rec.Level != level || rec.Message != msg {
			continue
		}
		val := ""
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				val = a.Value.String()
				return false
			}
			return true
		})
		return val, true
	}
	return "", false
}

// The reconnect WARN of a global-mode hub names the server whose
// subscription connection broke, not an empty node.
func TestReconnectWarnNamesNode(t *testing.T) {
	s, rdb := startServer(t)
	log := &records{}
	c := redis.NewClient(&redis.Options{Addr: s.Addr, ClientName: "relock-warn"})
	h := hub.New(c, false, slog.New(log))
	t.Cleanup(func() { h.Close(); c.Close() })
	a := subscribe(t, h, redistest.Key(t))

	if n, err := rdb.ClientKillByFilter(context.Background(), "TYPE", "pubsub").Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 client killed", n, err)
	}
	woken(t, a, "subscription connection killed")
	const msg = "relock: subscription connection failed; reconnecting"
	var node string
	redistest.Eventually(t, wait, "the reconnect WARN", func() bool {
		var ok bool
		node, ok = log.attr(slog.LevelWarn, msg, "node")
		return ok
	})
	if node != s.Addr {
		t.Fatalf("reconnect WARN has node=%q, want the server's address %s", node, s.Addr)
	}
}
