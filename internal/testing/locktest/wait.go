package locktest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// tryLock: wait 0 makes exactly one script call; a wait bound gives up
// after about the bound; nothing is left behind.
func tryLock(t *testing.T, e *env) {
	bg := context.Background()
	holder := e.k.New(e.client(t, nil), redistest.Key(t), 0)
	hctx := redistest.Lock(t, holder, bg)
	defer redistest.Unlock(t, holder, hctx)

	// Retries off and deadlines on: relock runs its scripts through this
	// client (and its hook) rather than a copy of its own.
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) { o.MaxRetries, o.ContextTimeoutEnabled = -1, true })
	calls := &redistest.ScriptCounter{}
	calls.Watch(rdb)
	rc, err := relock.New(rdb, &relock.Options{Linger: redistest.Linger})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	mu := e.k.New(rc, holder.Name(), 0)

	if _, err := mu.TryLock(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(0) = %v, want ErrNotAcquired", err)
	}
	if n := calls.N(); n != 1 {
		t.Fatalf("TryLock(0) made %d script calls, want 1", n)
	}
	e.assertOnlyHolder(t, holder, hctx)

	start := time.Now()
	_, err = mu.TryLock(bg, 300*time.Millisecond)
	took := time.Since(start)
	if !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryLock(300ms) = %v, want ErrNotAcquired", err)
	}
	t.Logf("TryLock(300ms) gave up after %v", took)
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("TryLock(300ms) gave up after %v", took)
	}
	e.assertOnlyHolder(t, holder, hctx)
	// The channel lingers for a while after its last waiter, then goes.
	redistest.Eventually(t, redistest.Linger+2*time.Second, "the lock's channels unsubscribed", func() bool {
		return e.subscribers(t, e.redis(t), holder.Name()) == 0
	})

	free := e.k.New(rc, redistest.Key(t), 0)
	ctx, err := free.TryLock(bg, 0)
	if err != nil {
		t.Fatalf("TryLock(0) of a free lock: %v", err)
	}
	redistest.Unlock(t, free, ctx)
}

// lockCancelledMidWait: the error matches both ErrNotAcquired and
// context.Canceled, and nothing is left behind.
func lockCancelledMidWait(t *testing.T, e *env) {
	name := redistest.Key(t)
	holder := e.k.New(e.client(t, nil), name, 0)
	hctx := redistest.Lock(t, holder, context.Background())
	defer redistest.Unlock(t, holder, hctx)
	raw := e.redis(t)

	rc, calls := e.countedClient(t, nil)
	mu := e.k.New(rc, name, 0)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error)
	go func() {
		_, err := mu.Lock(ctx)
		errc <- err
	}()
	e.awaitWaiting(t, name, 1, calls, 0)
	cancel()
	err := <-errc
	if !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock after cancel = %v, want ErrNotAcquired and context.Canceled", err)
	}
	e.assertOnlyHolder(t, holder, hctx)
	redistest.Eventually(t, 2*time.Second, "subscription dropped", func() bool { return e.subscribers(t, raw, name) == 0 })

	if _, err := mu.Lock(ctx); !errors.Is(err, relock.ErrNotAcquired) || !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled context = %v", err)
	}
}

// commandCalls sums INFO commandstats calls on servers except INFO's own
// and REPLCONF's (a cluster's replicas acknowledge their masters every
// second).
func commandCalls(t *testing.T, servers []*redis.Client) int64 {
	t.Helper()
	var total int64
	for _, rdb := range servers {
		total += serverCommandCalls(t, rdb)
	}
	return total
}

func serverCommandCalls(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	var total int64
	for cmd, n := range redistest.CommandCalls(t, rdb) {
		if cmd != "info" && cmd != "replconf" {
			total += n
		}
	}
	return total
}

// wakeUpNotPolling: a waiter is woken by the release message, not by its
// TTL, and sends no command while it waits (to any master of a cluster).
// A kind whose waiters poll is checked for polling instead
// (pollsWithoutListening).
func wakeUpNotPolling(t *testing.T, e *env) {
	if e.k.Poll > 0 {
		pollsWithoutListening(t, e)
		return
	}
	e = e.isolated(t)
	raw := e.redis(t)
	masters := e.masters(t)
	name := redistest.Key(t)
	holder := e.k.New(e.client(t, nil), name, 0)
	waiter := e.k.New(e.client(t, nil), name, 0)
	hctx := redistest.Lock(t, holder, context.Background())

	acquired := make(chan time.Time, 1)
	go func() {
		ctx, err := waiter.Lock(context.Background())
		acquired <- time.Now()
		if err != nil {
			t.Error(err)
			return
		}
		_ = waiter.Unlock(ctx)
	}()
	redistest.Eventually(t, 2*time.Second, "waiter subscribed", func() bool { return e.subscribers(t, raw, name) == 1 })
	time.Sleep(50 * time.Millisecond) // let the waiter's retry after subscribing land
	before := commandCalls(t, masters)
	time.Sleep(200 * time.Millisecond)
	if d := commandCalls(t, masters) - before; d != 0 {
		t.Fatalf("%d commands reached Redis while the waiter waited", d)
	}
	released := time.Now()
	redistest.Unlock(t, holder, hctx)
	got := <-acquired
	handoff := got.Sub(released)
	t.Logf("acquired %v after the unlock", handoff)
	// The lease is 30s: anything near a second means a missed wake-up.
	if handoff > time.Second {
		t.Fatalf("waiter acquired %v after the unlock: not woken by the release message", handoff)
	}
}

// oneSubscriptionConnection: however many goroutines wait, a client has
// one subscription connection (on a cluster, one per master serving a
// waited-on channel, none elsewhere; none at all for a kind whose
// waiters poll), and no channel is left subscribed after 1000 contended
// lock/unlock cycles.
func oneSubscriptionConnection(t *testing.T, e *env) {
	e = e.isolated(t)
	raw := e.redis(t)
	connName := "relock-onesub-" + strconv.FormatInt(connNames.Add(1), 10)
	rdb := e.redisWith(t, func(o *redis.UniversalOptions) {
		o.ClientName = connName
		if e.k.Poll > 0 {
			// Retries off and deadlines on: the counter sees every
			// attempt of the polling waiters.
			o.MaxRetries, o.ContextTimeoutEnabled = -1, true
		}
	})
	calls := &redistest.ScriptCounter{}
	calls.Watch(rdb)
	rc, err := relock.New(rdb, &relock.Options{Linger: redistest.Linger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })

	names := []string{redistest.Key(t), redistest.Key(t), redistest.Key(t)}
	holders := make([]context.Context, len(names))
	other := e.client(t, nil)
	for i, n := range names {
		holders[i] = redistest.Lock(t, e.k.New(other, n, 0), context.Background())
	}
	const waiters = 60
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range waiters {
		wg.Go(func() {
			_, err := e.k.New(rc, names[i%len(names)], 0).Lock(ctx)
			if !errors.Is(err, context.Canceled) {
				t.Errorf("waiter: %v", err)
			}
		})
	}
	if e.k.Poll > 0 {
		// Two attempts a waiter, on average: they are past their first.
		redistest.Eventually(t, 5*time.Second, "waiters polling", func() bool { return calls.N() >= 2*waiters })
	} else {
		redistest.Eventually(t, 5*time.Second, "all waiters subscribed", func() bool {
			var n int64
			for _, name := range names {
				n += e.subscribers(t, raw, name)
			}
			// A shared channel counts its one subscription once.
			return n >= int64(len(names))
		})
	}
	owners := map[string]bool{} // the servers that must have a subscription
	for _, n := range names {
		owners[nodeFor(t, raw, e.channel(n)).Options().Addr] = e.k.Poll == 0
	}
	for _, srv := range e.servers(t) {
		want := 0
		if owners[srv.Options().Addr] {
			want = 1
		}
		if n := subscriptionConns(t, srv, connName); n != want {
			t.Fatalf("%s: %d subscription connections for %d waiters, want %d", srv.Options().Addr, n, waiters, want)
		}
	}
	cancel()
	wg.Wait()
	for i, n := range names {
		redistest.Unlock(t, e.k.New(other, n, 0), holders[i])
	}

	clients := []*relock.Client{rc, other, e.client(t, nil), e.client(t, nil)}
	var cycles atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for cycles.Add(1) <= 1000 {
				mu := e.k.New(clients[w%len(clients)], names[w%2], 0)
				lctx, err := mu.Lock(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if err := mu.Unlock(lctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	redistest.Eventually(t, 5*time.Second, "no channel subscribed", func() bool { return e.channels(t) == 0 })
	for _, n := range names {
		e.assertNoResidue(t, n)
	}
}

var connNames atomic.Int64

// channels counts the channels subscribed on every server of the
// deployment, sharded ones too on a cluster, but the channels on which
// relock clients listen for force-unlocks of their locks, which stay
// subscribed for the client's life.
func (e *env) channels(t testing.TB) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, srv := range e.servers(t) {
		chans := srv.PubSubChannels(ctx, "*").Val()
		if e.cluster != nil {
			chans = append(chans, srv.PubSubShardChannels(ctx, "*").Val()...)
		}
		for _, ch := range chans {
			if !strings.HasPrefix(ch, "relock_client:") {
				n++
			}
		}
	}
	return n
}

// subscriptionConns counts the connections named name in subscribed mode.
func subscriptionConns(t *testing.T, rdb *redis.Client, name string) int {
	t.Helper()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			v, ok := strings.CutPrefix(f, "sub=")
			if !ok {
				v, ok = strings.CutPrefix(f, "ssub=")
			}
			if ok && v != "0" {
				n++
				break
			}
		}
	}
	return n
}
