package hub

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/sentinel"
)

// ErrClosed is returned by Subscribe, Join and Listen after Close: the
// one closed sentinel (package sentinel).
var ErrClosed = sentinel.ErrClosed

// writeTimeout bounds each subscribe, unsubscribe and ping the hub sends.
const writeTimeout = 5 * time.Second

// A Hub multiplexes waiters' subscriptions onto shared connections.
type Hub struct {
	rdb     redis.UniversalClient
	sharded bool
	log     *slog.Logger

	// linger and maxIdle are set by SetLinger before first use.
	linger  time.Duration
	maxIdle int

	// mu guards the fields below it, and those of the hub's channels,
	// subscriptions and links that say so. It is held for no Redis
	// command and no listener: link.writer sends subscription changes
	// after releasing it, and deliver calls listeners after route has
	// released it.
	mu sync.Mutex
	// links are the subscription connections by node address ("" in
	// global mode). A sharded link is added for a master a channel's
	// slot names and leaves when its connection breaks while no channel
	// is subscribed on it (rehome): a master removed from the cluster
	// stops answering and its link goes. One that stays up without the
	// slots (a failed-over master back as a replica) keeps its idle link
	// until its connection breaks or the hub closes.
	links    map[string]*link
	channels map[string]*channel // subscribed channels, with waiters or idle
	pings    map[string]pending  // confirmation ping payload -> subscription awaiting it
	nextPing uint64
	closed   bool
	// idle lists the subscribed channels without waiters, least recently
	// left first; sweeping tells whether the sweeper goroutine runs
	// (linger.go).
	idle     []*channel
	sweeping bool

	stop chan struct{}
	wg   sync.WaitGroup
}

// New returns a hub for rdb. In sharded mode rdb must be a
// *redis.ClusterClient and channels are subscribed with SSUBSCRIBE on the
// node that owns their slot.
func New(rdb redis.UniversalClient, sharded bool, log *slog.Logger) *Hub {
	return &Hub{
		rdb:      rdb,
		sharded:  sharded,
		log:      log,
		links:    make(map[string]*link),
		channels: make(map[string]*channel),
		pings:    make(map[string]pending),
		stop:     make(chan struct{}),
	}
}

// Done is closed when the hub is closed.
func (h *Hub) Done() <-chan struct{} { return h.stop }

// Close closes the hub's connections and waits for their goroutines.
// Waiters see Done closed; their subscriptions may still be closed.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.wg.Wait()
		return nil
	}
	h.closed = true
	close(h.stop)
	var err error
	for _, l := range h.links {
		err = errors.Join(err, l.close())
	}
	h.mu.Unlock()
	h.wg.Wait()
	return err
}
