package transport

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/observe"
)

// Eviction. Every key relock writes has a TTL, so a master with a
// maxmemory and any maxmemory-policy but noeviction may evict a held
// lock's key under memory pressure (the volatile-* policies choose among
// exactly such keys), and a second holder then takes the lock. The
// holder learns it at its next renewal, which finds the key gone, but
// for up to a renewal interval two hold the lock. relock cannot prevent
// it; it says so, once for each master: a warning on the client's logger
// and the Observer's MayEvict. It learns the master's settings from INFO
// memory, sent with the sections replica sync reads (readView, again at
// each replicaRefresh, so a master given a maxmemory later is told too)
// or, when the client does not read those (SyncReplicas other than
// SyncAuto), on its own for every master, in the background, with the
// client's first acquire.

// memory is what a master's INFO memory says of eviction.
type memory struct {
	read      bool   // the section had a maxmemory_policy; a stand-in server may have none
	maxmemory int64  // bytes; 0 for no limit
	human     string // maxmemory_human, for the log
	policy    string // maxmemory_policy
	refused   error  // the server refused INFO (an ACL user without it): nothing is known
}

// evicts reports whether the master may evict keys.
func (m memory) evicts() bool { return m.read && m.maxmemory > 0 && m.policy != "noeviction" }

// memoryReply reads INFO memory's reply. A server that refuses the
// section as unknown reports nothing; one that refuses INFO by its ACL
// reports the refusal. A network error is an error.
func memoryReply(cmd *redis.StringCmd) (memory, error) {
	text, err := cmd.Result()
	var rerr redis.Error
	switch {
	case err == nil:
	case errors.As(err, &rerr) && strings.HasPrefix(err.Error(), "NOPERM"):
		return memory{refused: err}, nil
	case errors.As(err, &rerr):
		return memory{}, nil
	default:
		return memory{}, err
	}
	m := memory{policy: infoField(text, "maxmemory_policy"), human: infoField(text, "maxmemory_human")}
	m.read = m.policy != ""
	m.maxmemory, _ = strconv.ParseInt(infoField(text, "maxmemory"), 10, 64)
	return m, nil
}

// eviction is m as an Observer is told it, of the master at addr.
func (m memory) eviction(addr string) observe.Eviction {
	return observe.Eviction{Addr: addr, MaxMemory: m.maxmemory, Policy: m.policy, Err: m.refused}
}

// ReadEviction asks the master rdb for INFO memory, and returns its
// settings as an Observer is told them and whether there is anything to
// tell: the master may evict keys, or it refused INFO (the Eviction's
// Err). A server without the section (an embedded stand-in) has nothing
// to tell; a network error is an error.
func ReadEviction(ctx context.Context, rdb redis.Cmdable) (observe.Eviction, bool, error) {
	m, err := memoryReply(rdb.Info(ctx, "memory"))
	return m.eviction(""), m.evicts() || m.refused != nil, err
}

// evictions are the masters the client has told of.
type evictions struct {
	// swept is set while, or once, a check of every master runs on its
	// own (checkEviction).
	swept atomic.Bool
	mu    sync.Mutex // guards told
	// told holds the address (as syncs.views keys them) of each master
	// told of, at most maxTold: a cluster whose masters come and go under
	// new addresses (masters.go) would otherwise add one for each
	// address ever seen that evicts. Past maxTold it starts afresh, and a
	// master still evicting is told of again.
	told map[string]bool
}

// maxTold bounds evictions.told: far more masters than a cluster has at
// once.
const maxTold = 256

// checkEviction checks every master once, with INFO memory on its own,
// for a client that does not read INFO for replica sync: with its first
// acquire, in the background, so that no acquire waits for it. A network
// error leaves it to a later acquire. A master that takes over later (a
// failover, a cluster's new node) is not checked.
func (t *Transport) checkEviction(ctx context.Context) {
	if t.evict.swept.Load() || !t.evict.swept.CompareAndSwap(false, true) {
		return
	}
	t.cfg.Owner.Background(func() {
		bctx, cancel := t.cfg.Owner.BackgroundContext(ctx)
		defer cancel()
		if err := t.sweepEviction(bctx); err != nil {
			t.evict.swept.Store(false)
		}
	})
}

// sweepEviction reads every master's INFO memory and tells of each.
func (t *Transport) sweepEviction(ctx context.Context) error {
	cc, ok := t.Scripts.(*redis.ClusterClient)
	if !ok {
		m, err := memoryReply(t.Scripts.Info(ctx, "memory"))
		if err == nil {
			t.tellEviction("", m)
		}
		return err
	}
	return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		m, err := memoryReply(node.Info(ctx, "memory"))
		if err == nil {
			t.tellEviction(node.Options().Addr, m)
		}
		return err
	})
}

// tellEviction tells what m says of the master at addr, unless the
// master was told of before: a warning when it may evict keys, a note
// when it could not be checked, nothing (and nothing remembered, so
// that a master whose settings change is told at its next report) when
// it does not evict.
func (t *Transport) tellEviction(addr string, m memory) {
	if !m.evicts() && m.refused == nil {
		return
	}
	t.evict.mu.Lock()
	done := t.evict.told[addr]
	if !done && len(t.evict.told) >= maxTold {
		clear(t.evict.told)
	}
	t.evict.told[addr] = true
	t.evict.mu.Unlock()
	if done {
		return
	}
	var attrs []any
	if addr != "" {
		attrs = append(attrs, "addr", addr)
	}
	switch {
	case t.cfg.Log == nil:
	case m.refused != nil:
		t.cfg.Log.Info("relock: could not check whether Redis may evict lock keys (INFO refused); make sure its maxmemory-policy is noeviction",
			append(attrs, "err", m.refused)...)
	default:
		t.cfg.Log.Warn("relock: Redis may evict lock keys under memory pressure, and an evicted lock lets a second holder in: set maxmemory-policy noeviction, or keep locks on a Redis of their own",
			append(attrs, slog.String("maxmemory", m.human), slog.String("maxmemory-policy", m.policy))...)
	}
	if t.cfg.Observer != nil {
		t.cfg.Observer.MayEvict(m.eviction(addr))
	}
}
