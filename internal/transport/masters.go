package transport

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// State by master address. On a cluster the client keeps, for each master
// its calls go to, a Pipe's batchers (Pipe.nodes, Pipe.synced) and the
// master's report of its replicas (syncs.views). A master that fails
// over, is resharded away or leaves the cluster is replaced by another
// address, and an entry for each address ever seen would stay for the
// client's life. Each entry therefore records a key its calls were for,
// and when an address is added, the entries of the others whose keys'
// slots no longer have that address as master in the client's layout
// (the cluster client's, as last loaded: no round trip) are dropped. A
// master that still owns other slots is added again, anew, by its next
// call. Between additions a map does not grow, and after one it holds at
// most one entry a master of the layout the client had then, plus the
// new one.

// ownsKey reports whether addr is still the master of key's slot in cc's
// layout. An error (no layout loaded) keeps the entry.
func ownsKey(ctx context.Context, cc *redis.ClusterClient, addr, key string) bool {
	node, err := cc.MasterForKey(ctx, key)
	return err != nil || node.Options().Addr == addr
}

// pruneBatchers drops from m, a Pipe's batchers by master address, those
// of masters other than except whose keys' slots moved away. A batcher
// dropped with calls in flight finishes them; the next call to its
// address makes a new one.
func pruneBatchers(ctx context.Context, cc *redis.ClusterClient, m *sync.Map, except string) {
	m.Range(func(k, v any) bool {
		addr, b := k.(string), v.(*batcher)
		if addr != except && !ownsKey(ctx, cc, addr, b.key) {
			m.CompareAndDelete(addr, b)
		}
		return true
	})
}

// pruneViewsLocked drops from s.views the reports of masters other than
// except whose keys' slots moved away; s.mu is held.
func (s *syncs) pruneViewsLocked(ctx context.Context, cc *redis.ClusterClient, except string) {
	for addr, v := range s.views {
		if addr != except && !ownsKey(ctx, cc, addr, v.key) {
			delete(s.views, addr)
		}
	}
}
