package core

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"

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
// each ReplicaRefresh, so a master given a maxmemory later is told too)
// or, when the client does not read those (SyncReplicas other than
// SyncAuto), on its own with the first acquire sent to each master.

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

// evictions are the masters the client has checked.
type evictions struct {
	mu sync.Mutex // guards masters
	// masters holds, by address (as syncs.views keys them), each master
	// checked: one entry for each master the client has sent an acquire
	// to, which a cluster's layout bounds.
	masters map[string]evictState
}

// evictState is what was done about one master.
type evictState struct {
	checked bool // its settings were read on their own (checkEviction)
	told    bool // it was told of (tellEviction)
}

// checked reports whether the master at addr was checked on its own.
func (e *evictions) checked(addr string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.masters[addr].checked
}

// checkEviction checks key's master once, with INFO memory on its own,
// for a client that does not read INFO for replica sync. A network error
// leaves it to the next acquire; the acquire goes on either way.
func (c *Client) checkEviction(ctx context.Context, key string) {
	if _, cluster := c.Scripts.(*redis.ClusterClient); !cluster && c.evict.checked("") {
		return
	}
	rdb, addr, err := c.master(ctx, key)
	if err != nil || c.evict.checked(addr) {
		return
	}
	m, err := memoryReply(rdb.Info(ctx, "memory"))
	if err != nil {
		return
	}
	c.evict.mu.Lock()
	st := c.evict.masters[addr]
	st.checked = true
	c.evict.masters[addr] = st
	c.evict.mu.Unlock()
	c.tellEviction(addr, m)
}

// tellEviction tells what m says of the master at addr, unless the
// master was told of before: a warning when it may evict keys, a note
// when it could not be checked, nothing (and nothing remembered, so
// that a master whose settings change is told at its next report) when
// it does not evict.
func (c *Client) tellEviction(addr string, m memory) {
	if !m.evicts() && m.refused == nil {
		return
	}
	c.evict.mu.Lock()
	st := c.evict.masters[addr]
	done := st.told
	st.told = true
	c.evict.masters[addr] = st
	c.evict.mu.Unlock()
	if done {
		return
	}
	var attrs []any
	if addr != "" {
		attrs = append(attrs, "addr", addr)
	}
	switch {
	case c.cfg.Log == nil:
	case m.refused != nil:
		c.cfg.Log.Info("relock: could not check whether Redis may evict lock keys (INFO refused); make sure its maxmemory-policy is noeviction",
			append(attrs, "err", m.refused)...)
	default:
		c.cfg.Log.Warn("relock: Redis may evict lock keys under memory pressure, and an evicted lock lets a second holder in: set maxmemory-policy noeviction, or keep locks on a Redis of their own",
			append(attrs, slog.String("maxmemory", m.human), slog.String("maxmemory-policy", m.policy))...)
	}
	if c.cfg.Observer != nil {
		c.cfg.Observer.MayEvict(m.eviction(addr))
	}
}
