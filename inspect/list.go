package inspect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/derive"
	"github.com/relock-go/relock/internal/layout"
)

// ScanCount is the COUNT hint of each SCAN call List makes: about how
// many keys one call looks at, and so the work Redis does per call.
const ScanCount = 100

// List calls fn with the name of every lock record whose key matches
// pattern, a glob as SCAN MATCH takes it ("" means every key), and
// returns fn's first error, or ctx's once it ends. It walks the key space
// with SCAN, ScanCount keys a call, on every master of a
// *redis.ClusterClient (one after another, by address) and on the server
// of any other client; fn is never called concurrently, and with each
// name once.
//
// Like Read, List returns by ctx's deadline whatever rdb's settings.
//
// A lock record is a hash whose fields are all owner fields holding hold
// counts ("<client id>:<owner>", a writer's with ":write"), or a
// read/write lock's "mode": up to 16 fields of each hash are looked at.
// A lock's companion keys (a fair queue and its deadlines, relock's
// waiter registry, a fencing counter, read-hold keys, Redisson's unlock
// latches) are not records and are skipped, as are other applications'
// keys. As with any SCAN, a lock created or deleted during the walk may
// or may not be seen.
func List(ctx context.Context, rdb redis.UniversalClient, pattern string, fn func(name string) error) error {
	if core.IsNil(rdb) {
		return fmt.Errorf("inspect: nil redis client: %w", relock.ErrInvalidArgument)
	}
	if fn == nil {
		return fmt.Errorf("inspect: nil func: %w", relock.ErrInvalidArgument)
	}
	if pattern == "" {
		pattern = "*"
	}
	rdb, done := derive.Deadlines(rdb)
	defer done()
	nodes, err := masters(ctx, rdb)
	if err != nil {
		return fmt.Errorf("inspect: finding the cluster's masters: %w", err)
	}
	// SCAN may return a key twice; a name seen is not passed on again.
	seen := make(map[string]bool)
	for _, node := range nodes {
		err := scan(ctx, node, pattern, func(name string) error {
			if seen[name] {
				return nil
			}
			seen[name] = true
			return fn(name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// masters returns the clients to scan: each master of a cluster, by
// address, or rdb itself.
func masters(ctx context.Context, rdb redis.UniversalClient) ([]redis.Cmdable, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return []redis.Cmdable{rdb}, nil
	}
	var mu sync.Mutex // guards found: ForEachMaster calls in parallel
	var found []*redis.Client
	err := cc.ForEachMaster(ctx, func(_ context.Context, node *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		found = append(found, node)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(found, func(a, b *redis.Client) int { return cmp.Compare(a.Options().Addr, b.Options().Addr) })
	nodes := make([]redis.Cmdable, len(found))
	for i, n := range found {
		nodes[i] = n
	}
	return nodes, nil
}

// scan walks one server's keys matching pattern and calls fn with each
// lock record's name.
func scan(ctx context.Context, node redis.Cmdable, pattern string, fn func(string) error) error {
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, pattern, ScanCount).Result()
		if err != nil {
			return fmt.Errorf("inspect: SCAN: %w", err)
		}
		records, err := records(ctx, node, keys)
		if err != nil {
			return err
		}
		for _, name := range records {
			if err := fn(name); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// sampled is how many fields of a hash records looks at: HSCAN's COUNT.
// A lock's hash is small, and HSCAN returns all of a small hash.
const sampled = 16

// records returns those of keys that are lock records: for each key not
// named as a companion, TYPE and a first HSCAN in one pipeline.
func records(ctx context.Context, node redis.Cmdable, keys []string) ([]string, error) {
	type probe struct {
		name   string
		kind   *redis.StatusCmd
		fields *redis.ScanCmd
	}
	var probes []probe
	pipe := node.Pipeline()
	for _, k := range keys {
		if layout.LockCompanion(k) {
			continue
		}
		probes = append(probes, probe{k, pipe.Type(ctx, k), pipe.HScan(ctx, k, 0, "", sampled)})
	}
	if len(probes) == 0 {
		return nil, nil
	}
	// HSCAN of a key that is no hash fails alone (WRONGTYPE), and so may
	// a key that moved to another node (MOVED): such keys are no lock
	// records here. Any other failure ends the walk.
	_, _ = pipe.Exec(ctx)
	var names []string
	for _, p := range probes {
		kind, err := p.kind.Result()
		var rerr redis.Error
		switch {
		case errors.As(err, &rerr):
			continue
		case err != nil:
			return nil, fmt.Errorf("inspect: TYPE %q: %w", p.name, err)
		case kind != "hash":
			continue
		}
		fields, _, err := p.fields.Result()
		if err == nil && lockFields(fields) {
			names = append(names, p.name)
		}
	}
	return names, nil
}

// lockFields reports whether a hash's fields (flat, field then value)
// are those of a lock: owner fields holding counts, and a read/write
// lock's mode.
func lockFields(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	for i := 0; i+1 < len(fields); i += 2 {
		f, v := fields[i], fields[i+1]
		if f == "mode" {
			if v != "read" && v != "write" {
				return false
			}
			continue
		}
		if _, err := strconv.ParseInt(v, 10, 64); err != nil || !ownerField(f) {
			return false
		}
	}
	return true
}

// ownerField reports a field of the form "<client id>:<owner number>",
// or a writer's with ":write" after it.
func ownerField(f string) bool {
	f = strings.TrimSuffix(f, ":write")
	i := strings.LastIndexByte(f, ':')
	if i <= 0 || i == len(f)-1 {
		return false
	}
	for _, c := range f[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
