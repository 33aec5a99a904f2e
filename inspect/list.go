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
	"github.com/relock-go/relock/internal/derive"
	"github.com/relock-go/relock/internal/transport"
)

// ScanCount is the COUNT hint of each SCAN call List makes: about how
// many keys one call looks at, and so the work Redis does per call.
const ScanCount = 100

// List calls fn with the name of every lock record (KindLock,
// KindRWLock) whose name matches pattern, a glob as SCAN MATCH takes it
// ("" means every name), and returns fn's first error, or ctx's once it
// ends. It is Find for locks alone.
func List(ctx context.Context, rdb redis.UniversalClient, pattern string, fn func(name string) error) error {
	if fn == nil {
		return fmt.Errorf("inspect: nil func: %w", relock.ErrInvalidArgument)
	}
	return Find(ctx, rdb, pattern, func(name string, kind Kind) error {
		if kind == KindLock || kind == KindRWLock {
			return fn(name)
		}
		return nil
	})
}

// Find calls fn with the name and kind of every record whose name
// matches pattern, a glob as SCAN MATCH takes it ("" means every name),
// and returns fn's first error, or ctx's once it ends. It walks the key
// space with SCAN, ScanCount keys a call, on every master of a
// *redis.ClusterClient (one after another, by address) and on the server
// of any other client; fn is never called concurrently, and with each
// name and kind once. A name may have records of several kinds: a
// fenced lock's hash, its fencing counter and a fence guard's token.
//
// Like Read, Find returns by ctx's deadline whatever rdb's settings.
//
// Records are told by keyRules and recordRules, by what lasts of them,
// so that a record is found with the same kind whatever its state: a lock
// is a hash whose fields are all owner fields holding hold counts
// ("<client id>:<owner>", a writer's with ":write"), or a read/write
// lock's "mode" (up to 16 fields of each hash are looked at); a group
// lock is a hash of values and their holders; a count is a string
// holding an integer (a semaphore's, an expirable semaphore's or a
// latch's: Read tells its use); an election is found by its term
// counter, a fencing counter and a fence guard's token by their keys,
// and a fair lock by its queue keys as well as its hash (the queue may
// outlive the hash: nobody holds the lock, and its waiters are between
// tries or gone). Companion keys (relock's waiter and
// semaphore records, read-hold keys, Redisson's unlock latches and
// permits' timeouts) are no records and are skipped, as are other
// applications' keys, but for their integer strings, which are
// KindCount. As with any SCAN, a record created or deleted during the
// walk may or may not be seen.
func Find(ctx context.Context, rdb redis.UniversalClient, pattern string, fn func(name string, kind Kind) error) error {
	if fn == nil {
		return fmt.Errorf("inspect: nil func: %w", relock.ErrInvalidArgument)
	}
	return walk(ctx, rdb, pattern, func(name string, kind Kind, companion bool) error {
		if companion {
			return nil
		}
		return fn(name, kind)
	})
}

// walk calls fn with each record and each companion key found whose name
// matches pattern, each name, kind and companion flag once.
func walk(ctx context.Context, rdb redis.UniversalClient, pattern string, fn func(name string, kind Kind, companion bool) error) error {
	if transport.IsNil(rdb) {
		return fmt.Errorf("inspect: nil redis client: %w", relock.ErrInvalidArgument)
	}
	match, err := glob(pattern)
	if err != nil {
		return fmt.Errorf("inspect: pattern %q: %w: %w", pattern, err, relock.ErrInvalidArgument)
	}
	rdb, done := derive.Deadlines(rdb)
	defer done()
	nodes, err := masters(ctx, rdb)
	if err != nil {
		return fmt.Errorf("inspect: finding the cluster's masters: %w", transport.Ended(ctx, nil, err))
	}
	// SCAN may return a key twice, and several keys name one record.
	type seenKey struct {
		name      string
		kind      Kind
		companion bool
	}
	seen := make(map[seenKey]bool)
	for _, node := range nodes {
		err := scan(ctx, node, match, func(name string, kind Kind, companion bool) error {
			k := seenKey{name, kind, companion}
			if seen[k] {
				return nil
			}
			seen[k] = true
			return fn(name, kind, companion)
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

// scan walks one server's keys and calls fn with what each belongs to,
// for the names match accepts.
func scan(ctx context.Context, node redis.Cmdable, match func(string) bool, fn func(string, Kind, bool) error) error {
	var cursor uint64
	for {
		keys, next, err := node.Scan(ctx, cursor, "*", ScanCount).Result()
		if err != nil {
			return fmt.Errorf("inspect: SCAN: %w", transport.Ended(ctx, nil, err))
		}
		var own []string // keys that are records at their own name, if any
		for _, k := range keys {
			name, kind, companion, ok := derived(k)
			switch {
			case !ok:
				if match(k) {
					own = append(own, k)
				}
			case name != "" && match(name):
				if err := fn(name, kind, companion); err != nil {
					return err
				}
			}
		}
		found, err := records(ctx, node, own)
		if err != nil {
			return err
		}
		for _, r := range found {
			if err := fn(r.name, r.kind, false); err != nil {
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

type record struct {
	name string
	kind Kind
}

// records returns the kinds of those of keys that are records: TYPE and
// a first HSCAN in one pipeline, then GET of the strings, to tell an
// integer (recordRules).
func records(ctx context.Context, node redis.Cmdable, keys []string) ([]record, error) {
	type probe struct {
		shape
		typeCmd  *redis.StatusCmd
		fieldCmd *redis.ScanCmd
		valueCmd *redis.StringCmd
	}
	if len(keys) == 0 {
		return nil, nil
	}
	probes := make([]probe, len(keys))
	pipe := node.Pipeline()
	for i, k := range keys {
		probes[i].typeCmd, probes[i].fieldCmd = pipe.Type(ctx, k), pipe.HScan(ctx, k, 0, "", sampled)
	}
	// HSCAN of a key that is no hash fails alone (WRONGTYPE), and so may
	// a key that moved to another node (MOVED): such keys are no records
	// here. Any other failure ends the walk.
	_, _ = pipe.Exec(ctx)
	pipe = node.Pipeline()
	texts := 0
	for i := range probes {
		p := &probes[i]
		typ, err := p.typeCmd.Result()
		var rerr redis.Error
		switch {
		case errors.As(err, &rerr):
			continue
		case err != nil:
			return nil, fmt.Errorf("inspect: TYPE %q: %w", keys[i], transport.Ended(ctx, nil, err))
		}
		p.typ = typ
		switch typ {
		case "hash":
			p.fields, _, _ = p.fieldCmd.Result()
		case "string":
			p.valueCmd = pipe.Get(ctx, keys[i])
			texts++
		}
	}
	if texts > 0 {
		_, _ = pipe.Exec(ctx)
	}
	var found []record
	for i := range probes {
		p := &probes[i]
		if p.typ == "" {
			continue
		}
		if p.valueCmd != nil {
			p.value = p.valueCmd.Val()
		}
		switch k := kindOf(&p.shape); k {
		case KindNone, KindOther:
		default:
			found = append(found, record{keys[i], k})
		}
	}
	return found, nil
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
