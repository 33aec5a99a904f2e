package renew_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/renew"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests that do not stop,
// pause, restart or flush their server; each test uses its own lock names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, nil, &srv) }

// wait bounds every wait for something that must happen. It is far above
// what a loaded 2-core machine needs, so only a bug can exhaust it.
const wait = 5 * time.Second

// newWatchdog returns a watchdog closed when t ends.
func newWatchdog(t *testing.T, rdb redis.UniversalClient, timeout time.Duration) *renew.Watchdog {
	t.Helper()
	w := renew.New(rdb, timeout, nil)
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// hold writes a lock the way the acquire script does: a hash with the
// owner's field and the lease as its TTL. It returns the field and the
// time the write was sent, which stands for the acquire's send time.
func hold(t *testing.T, rdb redis.Cmdable, name string, lease time.Duration) (field string, sent time.Time) {
	t.Helper()
	field = "5b7e3f7e-8d4a-4c1e-9d0b-2f6f0d1c3a44:1"
	sent = time.Now()
	ctx := context.Background()
	if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, name, field, 1)
		p.PExpire(ctx, name, lease)
		return nil
	}); err != nil {
		t.Fatalf("holding %s: %v", name, err)
	}
	return field, sent
}

// holdWatched writes n locks of field with the lease, as hold does, in one
// pipeline on rdb, and has w renew each from the time the pipeline was
// sent, reporting losses to l. It returns the locks' names.
func holdWatched(t *testing.T, rdb redis.Cmdable, w *renew.Watchdog, l *losses, n int, field string, lease time.Duration) (names []string, sent time.Time) {
	t.Helper()
	ctx := context.Background()
	names = make([]string, n)
	sent = time.Now()
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range names {
			names[i] = redistest.Key(t) + ":" + strconv.Itoa(i)
			p.HSet(ctx, names[i], field, 1)
			p.PExpire(ctx, names[i], lease)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, nm := range names {
		if _, err := w.Watch(renewal(nm, field, lease), sent, l.lost); err != nil {
			t.Fatal(err)
		}
	}
	return names, sent
}

// pttls reads the PTTL of every name in one pipeline on rdb.
func pttls(t *testing.T, rdb redis.Cmdable, names []string) []*redis.DurationCmd {
	t.Helper()
	ctx := context.Background()
	ttls := make([]*redis.DurationCmd, len(names))
	if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, nm := range names {
			ttls[i] = p.PTTL(ctx, nm)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ttls
}

func renewal(name, field string, lease time.Duration) renew.Renewal {
	return renew.Renewal{Script: lua.Renew(), Keys: []string{name}, Args: []any{lease.Milliseconds(), field}}
}

func pttl(t *testing.T, rdb redis.Cmdable, name string) time.Duration {
	t.Helper()
	d, err := rdb.PTTL(context.Background(), name).Result()
	if err != nil {
		t.Fatalf("PTTL %s: %v", name, err)
	}
	return d
}

// A loss is one call of a lease's lost callback.
type loss struct {
	reason error
	at     time.Time
}

// A losses records lost callbacks; its callback never blocks.
type losses struct {
	mu    sync.Mutex
	calls []loss
	first chan struct{}
	once  sync.Once
}

func newLosses() *losses { return &losses{first: make(chan struct{})} }

func (l *losses) lost(reason error) {
	l.mu.Lock()
	l.calls = append(l.calls, loss{reason, time.Now()})
	l.mu.Unlock()
	l.once.Do(func() { close(l.first) })
}

func (l *losses) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.calls)
}

// all returns the losses so far.
func (l *losses) all() []loss {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loss(nil), l.calls...)
}

// await returns the first loss, failing the test if none comes within d.
func (l *losses) await(t *testing.T, d time.Duration) loss {
	t.Helper()
	select {
	case <-l.first:
	case <-time.After(d):
		t.Fatalf("lost not called within %v", d)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.calls[0]
}

// A pipe is one pipeline the client ran.
type pipe struct {
	start time.Time
	cmds  int
	names map[string]int // command name -> count
	ok    bool           // no error, and every reply 1
	end   time.Time
	err   error
}

// A counter is a go-redis hook that records the pipelines and single
// commands a client runs.
type counter struct {
	mu      sync.Mutex
	singles []string
	pipes   []pipe
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.mu.Lock()
		c.singles = append(c.singles, cmd.Name())
		c.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p := pipe{start: time.Now(), cmds: len(cmds), names: make(map[string]int)}
		err := next(ctx, cmds)
		p.ok = err == nil
		p.end, p.err = time.Now(), err
		for _, cmd := range cmds {
			p.names[strings.ToLower(cmd.Name())]++
			if c, isCmd := cmd.(*redis.Cmd); !isCmd || c.Val() != int64(1) {
				p.ok = false
			}
		}
		c.mu.Lock()
		c.pipes = append(c.pipes, p)
		c.mu.Unlock()
		return err
	}
}

// snapshot returns copies of what c recorded.
func (c *counter) snapshot() (singles []string, pipes []pipe) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.singles...), append([]pipe(nil), c.pipes...)
}

func (c *counter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.singles, c.pipes = nil, nil
}

// lastSuccess returns the start of the last pipeline in which every
// renewal succeeded, or zero.
func (c *counter) lastSuccess() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.pipes) - 1; i >= 0; i-- {
		if c.pipes[i].ok {
			return c.pipes[i].start
		}
	}
	return time.Time{}
}

var clientNames atomic.Int64

// hookedClient returns a client on s with a counter hook and a name of its
// own for CLIENT LIST; it closes when t ends. It honours context deadlines
// (ContextTimeoutEnabled), as a watchdog needs; opts may adjust the
// options.
func hookedClient(t *testing.T, s *redistest.Server, opts func(*redis.Options)) (*redis.Client, *counter, string) {
	t.Helper()
	name := "relock-watchdog-" + strconv.FormatInt(clientNames.Add(1), 10)
	o := &redis.Options{Addr: s.Addr, ClientName: name, ContextTimeoutEnabled: true}
	if opts != nil {
		opts(o)
	}
	rdb := redis.NewClient(o)
	c := &counter{}
	rdb.AddHook(c)
	t.Cleanup(func() { rdb.Close() })
	return rdb, c, name
}

// commandCalls returns INFO commandstats calls of cmd (lower case).
func commandCalls(t *testing.T, rdb *redis.Client, cmd string) int64 {
	t.Helper()
	return redistest.CommandCalls(t, rdb)[cmd]
}

// awaitRenewal returns once the lock's TTL goes up, which only a renewal
// does.
func awaitRenewal(t *testing.T, rdb redis.Cmdable, name string) {
	t.Helper()
	prev := pttl(t, rdb, name)
	redistest.Eventually(t, wait, "a renewal of "+name, func() bool {
		d := pttl(t, rdb, name)
		up := d > prev
		prev = d
		return up
	})
}

// startServer starts a server of the test's own, for tests that kill,
// pause, restart or flush it.
func startServer(t *testing.T) *redistest.Server {
	t.Helper()
	s := redistest.Start(t)
	s.RequireReal(t)
	t.Cleanup(func() { _ = s.Resume() })
	return s
}
