package relocktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
)

// AddrEnv names the environment variable that points the Kit at a Redis
// server of the user's instead of an embedded one.
const AddrEnv = "REDIS_ADDR"

// WatchdogTimeout is the WatchdogTimeout of the Kit's clients unless
// Options.Client sets one: short, so that a lost lease shows within
// seconds, yet long enough that a busy test machine does not lose leases
// by itself.
const WatchdogTimeout = 2 * time.Second

// closeTimeout bounds the Shutdown of the Kit's clients when it closes.
const closeTimeout = 5 * time.Second

// ErrNotEmbedded is returned by Advance on a server named by REDIS_ADDR,
// whose clock the Kit cannot move.
var ErrNotEmbedded = errors.New("relocktest: not the embedded server")

// Options configure a Kit. A nil *Options and zero fields mean the
// defaults documented on each field.
type Options struct {
	// Client configures the Kit's relock clients. A zero WatchdogTimeout
	// means the package's WatchdogTimeout, a nil Logger the test's log
	// (New) or slog.Default (Start).
	Client *relock.Options
	// Embedded runs an embedded server even when REDIS_ADDR is set: for
	// a test that needs Advance.
	Embedded bool
}

// A Kit is a relock client on a Redis server of the test's, and the
// controls that make its locks fail. Its methods are safe for concurrent
// use. Make one with New (or Start), one per test: the controls act on
// everything its Client holds or waits for.
// A nil *Kit's methods that return an error return one matching
// relock.ErrInvalidArgument; the others do nothing and return zero
// values (Client and Redis nil, Name "").
type Kit struct {
	opts   relock.Options
	srv    *embedded // nil on a server of REDIS_ADDR
	ropts  *redis.Options
	prefix string // every Name's, unique to the Kit
	names  atomic.Int64
	f      faults

	rdb    *redis.Client // the Client's, with the faults' hooks
	direct *redis.Client // Redis()
	client *relock.Client

	mu     sync.Mutex // guards peers and closed
	peers  []peer
	closed bool
	quiet  atomic.Bool // the test's log is closed to the Kit's clients
}

// errNil is the error of every operation of a nil *Kit.
var errNil = core.NilReceiver("relocktest", "Kit")

// peer is a client made by NewClient and its go-redis client.
type peer struct {
	rc  *relock.Client
	rdb *redis.Client
}

// New returns a Kit for tb, closed when tb ends (a failure to close is
// logged), and fails tb if it cannot start. The Kit's clients log to
// tb's log unless Options.Client sets a Logger.
func New(tb testing.TB, opts *Options) *Kit {
	tb.Helper()
	k, err := start(opts, tb)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := k.Close(); err != nil {
			tb.Log(err)
		}
	})
	return k
}

// Start returns a Kit that the caller closes with Close: for a TestMain
// that shares one Kit among a package's tests, or an example.
func Start(opts *Options) (*Kit, error) { return start(opts, nil) }

func start(opts *Options, tb testing.TB) (*Kit, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	k := &Kit{}
	if o.Client != nil {
		k.opts = *o.Client
	}
	if k.opts.WatchdogTimeout == 0 {
		k.opts.WatchdogTimeout = WatchdogTimeout
	}
	if k.opts.Logger == nil && tb != nil {
		k.opts.Logger = slog.New(slog.NewTextHandler(testLog{tb, &k.quiet}, nil))
	}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	k.prefix = "relocktest:" + hex.EncodeToString(id) + ":"

	addr := os.Getenv(AddrEnv)
	if o.Embedded || addr == "" {
		srv, err := startEmbedded()
		if err != nil {
			return nil, fmt.Errorf("relocktest: embedded server: %w", err)
		}
		k.srv, addr = srv, srv.m.Addr()
	}
	ropts, err := serverOptions(addr)
	if err != nil {
		k.srv.close()
		return nil, err
	}
	k.ropts = ropts
	k.direct = redis.NewClient(k.options())
	// A server that cannot be reached fails here, with its address,
	// rather than in the test's first lock.
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if err := k.direct.Ping(ctx).Err(); err != nil {
		k.direct.Close()
		k.srv.close()
		return nil, fmt.Errorf("relocktest: Redis at %s: %w", ropts.Addr, err)
	}
	k.rdb = redis.NewClient(k.options())
	// The hooks go on before relock.New, so that relock's own copies
	// of the client send their commands through them too.
	k.rdb.AddHook(hook{&k.f})
	k.client, err = relock.New(k.rdb, &k.opts)
	if err != nil {
		_ = k.Close()
		return nil, err
	}
	return k, nil
}

// serverOptions reads addr, a host:port or a redis:// URL.
func serverOptions(addr string) (*redis.Options, error) {
	if !strings.Contains(addr, "://") {
		return &redis.Options{Addr: addr}, nil
	}
	o, err := redis.ParseURL(addr)
	if err != nil {
		return nil, fmt.Errorf("relocktest: %s: %w", AddrEnv, err)
	}
	return o, nil
}

// options returns a fresh copy of the server's go-redis options. RESP3
// carries pub/sub messages as push frames, which DropWakeups tells from
// replies; context deadlines spare relock copies of the client.
func (k *Kit) options() *redis.Options {
	o := *k.ropts
	o.Protocol = 3
	o.ContextTimeoutEnabled = true
	return &o
}

// Client returns the relock client the controls act on.
func (k *Kit) Client() *relock.Client {
	if k == nil {
		return nil
	}
	return k.client
}

// NewClient returns another relock client on the Kit's server, with a
// go-redis client of its own, as if it were another process: no control
// touches it but ExpireNow, whose notice reaches its holders too. nil
// opts means the Kit's options. The Kit closes it.
func (k *Kit) NewClient(opts *relock.Options) (*relock.Client, error) {
	if k == nil {
		return nil, errNil
	}
	o := k.opts
	if opts != nil {
		o = *opts
		if o.WatchdogTimeout == 0 {
			o.WatchdogTimeout = WatchdogTimeout
		}
		if o.Logger == nil {
			o.Logger = k.opts.Logger
		}
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, errors.New("relocktest: NewClient after Close")
	}
	rdb := redis.NewClient(k.options())
	rc, err := relock.New(rdb, &o)
	if err != nil {
		rdb.Close()
		return nil, err
	}
	k.peers = append(k.peers, peer{rc, rdb})
	return rc, nil
}

// Redis returns a go-redis client on the Kit's server for the test's own
// commands, such as reading what a lock left in Redis. No control
// touches it. The Kit closes it.
func (k *Kit) Redis() *redis.Client {
	if k == nil {
		return nil
	}
	return k.direct
}

// Name returns a name for a lock (or semaphore, latch, election) that no
// other Kit uses, ending with label: "relocktest:<kit>:<n>:<label>". On a
// server of REDIS_ADDR, Close deletes the keys derived from such names.
func (k *Kit) Name(label string) string {
	if k == nil {
		return ""
	}
	return k.prefix + strconv.FormatInt(k.names.Add(1), 10) + ":" + label
}

// Close disarms the controls, shuts the Kit's clients down (releasing
// what they hold), deletes from a server of REDIS_ADDR the keys of the
// Kit's names, and stops the embedded server. It is idempotent.
func (k *Kit) Close() error {
	if k == nil {
		return errNil
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	return k.close(ctx)
}

func (k *Kit) close(ctx context.Context) error {
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil
	}
	k.closed = true
	peers := k.peers
	k.mu.Unlock()

	k.f.disarm()
	var errs []error
	if k.client != nil {
		errs = append(errs, k.client.Shutdown(ctx))
	}
	for _, p := range peers {
		errs = append(errs, p.rc.Shutdown(ctx), p.rdb.Close())
	}
	if k.srv == nil {
		errs = append(errs, k.clean(ctx))
	}
	k.quiet.Store(true)
	errs = append(errs, k.rdb.Close(), k.direct.Close())
	k.srv.close()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("relocktest: Close: %w", err)
	}
	return nil
}

// clean deletes the keys whose names contain the Kit's prefix, as every
// key derived from a Name does.
func (k *Kit) clean(ctx context.Context) error {
	iter := k.direct.Scan(ctx, 0, "*"+k.prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		if err := k.direct.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// testLog writes the clients' log lines to a test's log, until quiet: a
// test's log must not be written once it has ended.
type testLog struct {
	tb    testing.TB
	quiet *atomic.Bool
}

func (l testLog) Write(p []byte) (int, error) {
	if !l.quiet.Load() {
		l.tb.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}
