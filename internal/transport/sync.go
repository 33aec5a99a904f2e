package transport

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Replica sync. A lock granted by a master is on its replicas only once
// replication carries it there; a failover before that hands the lock to
// a second holder. An acquire therefore waits, by default, until the
// replicas its master reports as connected have it (WAIT, or WAITAOF when
// the master writes an append-only file), and fails when none of them
// confirmed while some are connected: Redisson's checkLockSyncedSlaves.
// Config.SyncReplicas picks the mode: SyncAuto, a fixed count, or
// negative for none.

// SyncAuto is the SyncReplicas value that waits for the replicas the
// master reports.
const SyncAuto = 0

// replicaRefresh is how long a master's report of its replicas is used
// before it is read again. A report is also dropped as soon as a WAIT
// counts a different number of replicas than it named.
const replicaRefresh = time.Second

// A replicaView is what a master last reported (INFO) about its replicas
// and its append-only file.
type replicaView struct {
	replicas int       // connected_slaves
	aof      bool      // aof_enabled, on a server that has WAITAOF (7.2+)
	memory   memory    // INFO memory: whether the master may evict keys (evict.go)
	read     time.Time // when the report was read
	key      string    // the key of the acquire that had it read (masters.go)
}

// syncs holds the masters' reports, by address ("" for a client of one
// server, whose address may change with a failover). A new address drops
// the reports of masters no longer in the layout (masters.go): views
// holds at most one report a master of the layout, plus the newest.
type syncs struct {
	mu    sync.Mutex // guards views
	views map[string]replicaView
	warm  sync.Once // the cluster client's COMMAND fetch (master)
}

// EvalAcquire runs an acquire script like Eval and, unless replica sync
// is off or the master has neither replicas nor an append-only file,
// sends WAIT (or WAITAOF) right behind it on the same connection, so the
// replicas counted are those that have this very acquire. The script's
// first key picks the node on a cluster.
//
// When the reply is one that acquired reports as an acquire and the
// replicas did not confirm it (fewer than SyncReplicas of them; in
// SyncAuto, none of those connected) within SyncTimeout, the reply is
// returned together with an error matching Config.NotAcquired: the acquire
// did happen on the master, and the caller must undo it.
func (t *Transport) EvalAcquire(ctx context.Context, acquired func(reply any) bool, s *redis.Script, keys []string, args ...any) (any, error) {
	return t.RunAcquire(ctx, acquired, &Call{Script: s, Keys: keys}, args...)
}

// RunAcquire is EvalAcquire for a Call.
func (t *Transport) RunAcquire(ctx context.Context, acquired func(reply any) bool, k *Call, args ...any) (any, error) {
	if t.cfg.SyncReplicas != SyncAuto {
		t.checkEviction(ctx)
	}
	if t.cfg.SyncReplicas < 0 {
		return k.Run(ctx, t.Pipe, args...)
	}
	rdb, addr, err := t.master(ctx, k.Keys[0])
	if err != nil {
		return nil, err
	}
	want, aof := t.cfg.SyncReplicas, false
	if want == SyncAuto {
		v, err := t.view(ctx, rdb, addr, k.Keys[0])
		if err != nil {
			return nil, err
		}
		if v.replicas == 0 && !v.aof {
			return k.Run(ctx, t.Pipe, args...)
		}
		want, aof = v.replicas, v.aof
	}
	// A copy, so that the caller's variadic arguments stay on its stack.
	var reply any
	var acked int64
	if p, ok := t.Pipe.(*Pipe); ok {
		w := &syncWait{replicas: want, aof: aof, timeoutMs: t.cfg.SyncTimeout.Milliseconds()}
		reply, acked, err = p.evalWait(ctx, rdb, addr, k, slices.Clone(args), w)
	} else {
		reply, acked, err = evalWait(ctx, rdb, k.Script, k.Keys, slices.Clone(args), want, aof, t.cfg.SyncTimeout.Milliseconds())
	}
	if err != nil {
		return nil, Ended(ctx, nil, err)
	}
	if acked != int64(want) && t.cfg.SyncReplicas == SyncAuto {
		t.dropView(addr)
	}
	if !acquired(reply) {
		return reply, nil
	}
	switch {
	case t.cfg.SyncReplicas > 0 && acked < int64(want):
		return reply, fmt.Errorf("%w: %d of %d replicas confirmed the acquire within %v",
			t.cfg.NotAcquired, acked, want, t.cfg.SyncTimeout)
	case t.cfg.SyncReplicas == SyncAuto && want > 0 && acked == 0:
		return reply, fmt.Errorf("%w: none of the master's %d connected replicas confirmed the acquire within %v",
			t.cfg.NotAcquired, want, t.cfg.SyncTimeout)
	}
	return reply, nil
}

// Syncs reports whether an acquire of key waits for replicas (or an
// append-only file) with the client's SyncReplicas, reading the master's
// report when it has none fresh enough.
func (t *Transport) Syncs(ctx context.Context, key string) (bool, error) {
	if t.cfg.SyncReplicas != SyncAuto {
		return t.cfg.SyncReplicas > 0, nil
	}
	rdb, addr, err := t.master(ctx, key)
	if err != nil {
		return false, err
	}
	v, err := t.view(ctx, rdb, addr, key)
	return v.replicas > 0 || v.aof, err
}

// master returns the client to send key's acquires to when they carry a
// WAIT: the master of key's slot on a cluster (a WAIT must go down the
// same connection as the script), and its address.
func (t *Transport) master(ctx context.Context, key string) (redis.Cmdable, string, error) {
	cc, ok := t.Scripts.(*redis.ClusterClient)
	if !ok {
		return t.Scripts, "", nil
	}
	// A cluster client fetches the commands' descriptions (COMMAND),
	// from a node it picks at random, with its first command. Acquires
	// that wait for replicas go to nodes directly, so that first command
	// could come only after a master stopped answering, and wait out a
	// timeout there (4.9 s in internal/clustertest's
	// TestWakeUpAfterFailover): have it fetched now, once.
	t.syncs.warm.Do(func() { _ = cc.Ping(ctx).Err() })
	node, err := cc.MasterForKey(ctx, key)
	if err != nil {
		return nil, "", err
	}
	return node, node.Options().Addr, nil
}

// view returns the report of the master at addr, read through rdb for
// an acquire of key when it has none younger than replicaRefresh.
func (t *Transport) view(ctx context.Context, rdb redis.Cmdable, addr, key string) (replicaView, error) {
	t.syncs.mu.Lock()
	v, ok := t.syncs.views[addr]
	t.syncs.mu.Unlock()
	if ok && time.Since(v.read) < replicaRefresh {
		return v, nil
	}
	v, err := readView(ctx, rdb)
	var refused redis.Error
	switch {
	case errors.As(err, &refused):
		// The server refused INFO (an ACL user without it): say what
		// asked for it and how to do without.
		t.tellEviction(addr, memory{refused: err})
		return v, fmt.Errorf("relock: reading the master's replicas for replica sync (set Options.SyncReplicas negative to turn it off): %w", err)
	case err != nil:
		return v, Ended(ctx, nil, err)
	}
	v.key = key
	t.syncs.mu.Lock()
	if _, ok := t.syncs.views[addr]; !ok {
		if cc, isCluster := t.Scripts.(*redis.ClusterClient); isCluster {
			t.syncs.pruneViewsLocked(ctx, cc, addr)
		}
	}
	t.syncs.views[addr] = v
	t.syncs.mu.Unlock()
	t.tellEviction(addr, v.memory)
	return v, nil
}

// dropView drops the report of the master at addr.
func (t *Transport) dropView(addr string) {
	t.syncs.mu.Lock()
	delete(t.syncs.views, addr)
	t.syncs.mu.Unlock()
}

// readView asks a master, in one round trip, for INFO's server,
// replication, persistence and memory sections. A server that refuses a
// section as unknown (an embedded stand-in) reports nothing for it: no
// replicas, no append-only file, no eviction. A refusal by the ACL is an
// error, as is a network error, but for the memory section alone
// (memoryReply).
func readView(ctx context.Context, rdb redis.Cmdable) (replicaView, error) {
	pipe := rdb.Pipeline()
	server := pipe.Info(ctx, "server")
	repl := pipe.Info(ctx, "replication")
	persist := pipe.Info(ctx, "persistence")
	mem := pipe.Info(ctx, "memory")
	_, _ = pipe.Exec(ctx)
	v := replicaView{read: time.Now()}
	var texts [3]string
	for i, cmd := range []*redis.StringCmd{server, repl, persist} {
		text, err := cmd.Result()
		var rerr redis.Error
		switch {
		case err == nil:
			texts[i] = text
		case errors.As(err, &rerr) && !strings.HasPrefix(err.Error(), "NOPERM"):
		default:
			return v, err
		}
	}
	v.replicas, _ = strconv.Atoi(infoField(texts[1], "connected_slaves"))
	v.aof = infoField(texts[2], "aof_enabled") == "1" && hasWaitAOF(infoField(texts[0], "redis_version"))
	var err error
	v.memory, err = memoryReply(mem)
	return v, err
}

// infoField returns the value of field in text, an INFO section's
// "<field>:<value>" lines, or "" when it has none. Each client reads its
// master's sections every replicaRefresh, so it looks up the few
// fields it needs rather than splitting every line.
func infoField(text, field string) string {
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		if k, val, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == field {
			return val
		}
		text = rest
	}
	return ""
}

// hasWaitAOF reports whether a server of this redis_version has WAITAOF
// (Redis 7.2 and later; Valkey reports 7.2.4).
func hasWaitAOF(version string) bool {
	major, rest, _ := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	return err1 == nil && err2 == nil && (ma > 7 || ma == 7 && mi >= 2)
}

// evalWait pipelines the script and WAIT (or WAITAOF 1, which also waits
// for the master's own fsync) on one connection, and returns the number
// of replicas that confirmed. It sends the script as EVAL: an EVALSHA
// answered NOSCRIPT would still cost a full WAIT before the retry.
func evalWait(ctx context.Context, rdb redis.Cmdable, s *redis.Script, keys []string, args []any, replicas int, aof bool, timeoutMs int64) (any, int64, error) {
	pipe := rdb.Pipeline()
	cmd := s.Eval(ctx, pipe, keys, args...)
	wait := waitCmd(ctx, pipe, &syncWait{replicas: replicas, aof: aof, timeoutMs: timeoutMs})
	_, _ = pipe.Exec(ctx)
	reply, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		reply, err = nil, nil
	}
	if err != nil {
		return nil, 0, err
	}
	acked, err := waitReply(wait)
	return reply, acked, err
}

// waitCmd queues in pipe the WAIT (WAITAOF) that w asks for.
func waitCmd(ctx context.Context, pipe redis.Pipeliner, w *syncWait) *redis.Cmd {
	if w.aof {
		return pipe.Do(ctx, "waitaof", 1, w.replicas, w.timeoutMs)
	}
	return pipe.Do(ctx, "wait", w.replicas, w.timeoutMs)
}

// waitReply reads WAIT's count, or the replicas' count in WAITAOF's
// {local, replicas}.
func waitReply(cmd *redis.Cmd) (int64, error) {
	v, err := cmd.Result()
	if err != nil {
		return 0, err
	}
	switch v := v.(type) {
	case int64:
		return v, nil
	case []any:
		if len(v) == 2 {
			if n, ok := v[1].(int64); ok {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("relock: unexpected reply %v to %v", v, cmd.Args())
}
