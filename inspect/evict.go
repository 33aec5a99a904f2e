package inspect

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/transport"
)

// MayEvict is the Problem of a Redis master that may evict keys under
// memory pressure: it has a maxmemory and a maxmemory-policy other than
// noeviction. Every lock key has a TTL, so the volatile-* policies pick
// among them first, and an evicted lock lets a second holder in before
// the first learns it at its next renewal. Its Finding names the master
// by its address, with KindServer.
const MayEvict Problem = "may-evict"

// KindServer is the Kind of a Finding about a Redis server rather than
// a record (MayEvict). It is no record's kind.
const KindServer Kind = "server"

// evictions checks every master's eviction settings (INFO memory): one
// that may evict keys is a MayEvict finding, one that refused INFO is
// listed in Report.Unchecked. A server without the section (an embedded
// stand-in) is neither.
func (d *doctor) evictions(ctx context.Context, rdb redis.UniversalClient) error {
	nodes, err := masters(ctx, rdb)
	if err != nil {
		return fmt.Errorf("inspect: finding the cluster's masters: %w", transport.Ended(ctx, nil, err))
	}
	for _, node := range nodes {
		e, tell, err := transport.ReadEviction(ctx, node)
		switch {
		case err != nil:
			return fmt.Errorf("inspect: reading the eviction settings (INFO memory): %w", transport.Ended(ctx, nil, err))
		case !tell:
			continue
		}
		addr := "the server"
		if c, ok := node.(*redis.Client); ok {
			addr = c.Options().Addr
		}
		if e.Err != nil {
			d.report.Unchecked = append(d.report.Unchecked, fmt.Sprintf("%s: %v", addr, e.Err))
			continue
		}
		d.add(Finding{Problem: MayEvict, Name: addr, Kind: KindServer, Detail: fmt.Sprintf(
			"maxmemory %d bytes with maxmemory-policy %s: under memory pressure the master may evict a held lock's key (every lock key has a TTL), and a second holder takes the lock; set maxmemory-policy noeviction, or keep the locks on a Redis of their own",
			e.MaxMemory, e.Policy)})
	}
	return nil
}
