package semaphore_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// registryOf, watcherOf and grantsOf are relock's keys of semaphore
// name's waiters.
func registryOf(name string) string { return "relock_semaphore_waiters:{" + name + "}" }
func watcherOf(name string) string  { return "relock_semaphore_watcher:{" + name + "}" }
func grantsOf(name string) string   { return "relock_semaphore_grants:{" + name + "}" }

// keysOf is the semaphore scripts' KEYS for semaphore name.
func keysOf(name string) []string {
	return []string{name, channelOf(name), registryOf(name), watcherOf(name), "relock_sc:{" + name + "}", grantsOf(name)}
}

// waitRegistered waits until n waiters of semaphore name are registered.
func waitRegistered(t *testing.T, raw *redis.Client, name string, n int64) {
	t.Helper()
	redistest.Eventually(t, 5*time.Second, fmt.Sprintf("%d waiters registered", n), func() bool {
		return raw.ZCard(context.Background(), registryOf(name)).Val() == n
	})
}

// settle waits until the counters have seen no script call for 200ms.
func settle(t *testing.T, counters ...*redistest.ScriptCounter) {
	t.Helper()
	sum := func() int64 {
		var n int64
		for _, c := range counters {
			n += c.N()
		}
		return n
	}
	last := sum()
	for range 25 {
		time.Sleep(200 * time.Millisecond)
		n := sum()
		if n == last {
			return
		}
		last = n
	}
	t.Fatalf("waiters still trying after 5s")
}

// assertNothingLeft fails the test if relock's keys of semaphore name's
// waiters exist.
func assertNothingLeft(t *testing.T, raw *redis.Client, name string) {
	t.Helper()
	redistest.Eventually(t, 2*time.Second, "registry, watcher and grants gone", func() bool {
		return raw.Exists(context.Background(), registryOf(name), watcherOf(name), grantsOf(name)).Val() == 0
	})
}

// TestFIFOAcrossClients: waiters on six clients, each registered after
// the one before, get one permit each, released one at a time, in the
// order they came, whoever releases.
func TestFIFOAcrossClients(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	const n = 6
	got := make(chan int, n)
	for i := range n {
		s := semaphore.New(newClient(t, nil), name, nil)
		go func() {
			if err := s.Acquire(bg, 1); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			got <- i
		}()
		waitRegistered(t, raw, name, int64(i+1))
	}
	releaser := semaphore.New(newClient(t, nil), name, nil)
	for want := range n {
		if err := releaser.Release(bg, 1); err != nil {
			t.Fatal(err)
		}
		select {
		case i := <-got:
			if i != want {
				t.Fatalf("release %d went to waiter %d, want %d (the longest waiting)", want, i, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("release %d: no waiter acquired", want)
		}
	}
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// TestReleaseHandsWhatItCovers: of eight waiters on eight clients, a
// release of 3 permits hands one each to three, which take them without
// a script call of their own; the other five make none either. Among them is the watcher (the
// first to register, for 5 permits), which listens on the shared channel
// too: the release's message there wakes nobody.
func TestReleaseHandsWhatItCovers(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	const n = 8
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	counters := make([]*redistest.ScriptCounter, n)
	got := make(chan int, n)
	for i := range n {
		counters[i] = &redistest.ScriptCounter{}
		s := semaphore.New(srv.Counted(t, counters[i]), name, nil)
		want := int64(1)
		if i == 0 {
			want = 5
		}
		go func() {
			if err := s.Acquire(ctx, want); err == nil {
				got <- i
			}
		}()
		if i == 0 {
			waitRegistered(t, raw, name, 1)
		}
	}
	waitRegistered(t, raw, name, n)
	settle(t, counters...)
	before := make([]int64, n)
	for i, c := range counters {
		before[i] = c.N()
	}
	if err := semaphore.New(newClient(t, nil), name, nil).Release(bg, 3); err != nil {
		t.Fatal(err)
	}
	woken := map[int]bool{}
	for range 3 {
		select {
		case i := <-got:
			woken[i] = true
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 3 waiters acquired", len(woken))
		}
	}
	settle(t, counters...)
	select {
	case i := <-got:
		t.Fatalf("a fourth waiter, %d, acquired with 3 permits released", i)
	default:
	}
	for i, c := range counters {
		d := c.N() - before[i]
		if d != 0 {
			t.Errorf("waiter %d (served: %v) made %d script calls after the release, want 0", i, woken[i], d)
		}
	}
	if woken[0] {
		t.Error("the waiter for 5 took permits")
	}
	if v := raw.Get(bg, name).Val(); v != "0" {
		t.Fatalf("count = %q, want 0", v)
	}
	cancel()
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// TestWantsOnOneClient: one client's waiters for 2, 1 and 1 permits,
// registered in that order, all take theirs from one release of 4: none
// is left asleep. Then a release of 2 with waiters for 3 and 1 wakes the
// one it can satisfy, passing over the one for 3.
func TestWantsOnOneClient(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	rc := newClient(t, nil)
	other := semaphore.New(newClient(t, nil), name, nil)
	var waiters []<-chan result
	for i, n := range []int64{2, 1, 1} {
		waiters = append(waiters, acquiring(bg, semaphore.New(rc, name, nil), n))
		waitRegistered(t, raw, name, int64(i+1))
	}
	if err := other.Release(bg, 4); err != nil {
		t.Fatal(err)
	}
	for i, w := range waiters {
		if r := within(t, w, 5*time.Second, fmt.Sprintf("waiter %d after a release of 4", i)); r.err != nil {
			t.Fatal(r.err)
		}
	}
	if v := raw.Get(bg, name).Val(); v != "0" {
		t.Fatalf("count = %q, want 0", v)
	}

	big := acquiring(bg, semaphore.New(rc, name, nil), 3)
	waitRegistered(t, raw, name, 1)
	small := acquiring(bg, semaphore.New(rc, name, nil), 1)
	waitRegistered(t, raw, name, 2)
	if err := other.Release(bg, 2); err != nil {
		t.Fatal(err)
	}
	if r := within(t, small, 5*time.Second, "waiter for 1 after a release of 2"); r.err != nil {
		t.Fatal(r.err)
	}
	quiet(t, big, 200*time.Millisecond, "waiter for 3 with 1 permit left")
	if err := other.Release(bg, 2); err != nil {
		t.Fatal(err)
	}
	if r := within(t, big, 5*time.Second, "waiter for 3 after 3 were free"); r.err != nil {
		t.Fatal(r.err)
	}
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// TestNoBarging: a newcomer does not take a permit a release woke a
// registered waiter for, even when its attempt runs right after the
// release, before the woken waiter can try (the two scripts are sent in
// one MULTI, as a client that releases and acquires again at once may
// come first).
func TestNoBarging(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	waiter := acquiring(bg, semaphore.New(newClient(t, nil), name, nil), 1)
	waitRegistered(t, raw, name, 1)
	keys := keysOf(name)
	for _, s := range []*redis.Script{lua.SemaphoreRelease(), lua.SemaphoreAcquire()} {
		if err := s.Load(bg, raw).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var try *redis.Cmd
	if _, err := raw.TxPipelined(bg, func(p redis.Pipeliner) error {
		lua.SemaphoreRelease().EvalSha(bg, p, keys, "PUBLISH", 1)
		try = lua.SemaphoreAcquire().EvalSha(bg, p, keys, "PUBLISH", 1, "0e5f7c1a-3b1d-4c62-9a8e-5f2d1b7c9e40:g1:1", "0", "0", "")
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if try.Val() == int64(1) {
		t.Fatal("a newcomer took the permit a registered waiter was woken for")
	}
	if r := within(t, waiter, 5*time.Second, "woken waiter"); r.err != nil {
		t.Fatal(r.err)
	}
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// TestUnreadGrant: permits handed to a waiter whose client has not read
// the message (it came too late, or the connection dropped it) stay the
// waiter's: its next attempt takes them, and its give-up returns them. A
// grant not acknowledged for ten seconds is revoked, its permits back in
// the count, and an acknowledgement that comes after all takes them back,
// once. The waiter is played with the scripts, its client by a raw
// subscriber.
func TestUnreadGrant(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	keys := keysOf(name)
	const id = "5b0c3f0e-8d4e-4a57-9c1e-2f6a7d9b1c33"
	client := listen(t, raw, "relock_sc:{"+name+"}:"+id)
	releaser := semaphore.New(newClient(t, nil), name, nil)
	count := func(want string) {
		t.Helper()
		if got := raw.Get(bg, name).Val(); got != want {
			t.Fatalf("count %q, want %q", got, want)
		}
	}
	// register has member wait, listening, and a release hand it one
	// permit; it returns the registration time.
	register := func(member, tag string) string {
		t.Helper()
		reply, err := lua.SemaphoreAcquire().Run(bg, raw, keys, "PUBLISH", 1, member, "1", "0", "").Result()
		if err != nil {
			t.Fatal(err)
		}
		w, err := lua.ParseWait(reply)
		if err != nil || w.Registered == 0 {
			t.Fatalf("attempt with no permits: %v, %v; want it registered", reply, err)
		}
		if err := releaser.Release(bg, 1); err != nil {
			t.Fatal(err)
		}
		client.expect("the release", tag+":g")
		count("0")
		if raw.ZScore(bg, grantsOf(name), member).Err() != nil {
			t.Fatalf("no grant recorded for %s", member)
		}
		if n := raw.ZCard(bg, registryOf(name)).Val(); n != 0 {
			t.Fatalf("%d waiters registered after the grant, want 0", n)
		}
		return strconv.FormatInt(w.Registered, 10)
	}

	first := id + ":g1:1"
	reg := register(first, "g1")
	if got := lua.SemaphoreAcquire().Run(bg, raw, keys, "PUBLISH", 1, first, "1", reg, "").Val(); got != int64(1) {
		t.Fatalf("the waiter's next attempt = %v, want 1 (took the permits handed to it)", got)
	}
	count("0")

	second := id + ":g2:1"
	register(second, "g2")
	if got := lua.SemaphoreGiveUp().Run(bg, raw, keys, "PUBLISH", second).Val(); got != int64(2) {
		t.Fatalf("give-up = %v, want 2 (returned the permits handed to it)", got)
	}
	count("1")

	// A grant ten seconds old, never acknowledged: the next acquire
	// revokes it and takes the permit.
	if err := releaser.TryAcquire(bg, 1, 0); err != nil {
		t.Fatal(err)
	}
	third := id + ":g3:1"
	register(third, "g3")
	old := float64(serverMicros(t, raw) - 11_000_000)
	if err := raw.ZAddXX(bg, grantsOf(name), redis.Z{Score: old, Member: third}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := releaser.TryAcquire(bg, 1, 0); err != nil {
		t.Fatalf("TryAcquire with a grant due for revocation: %v", err)
	}
	count("0")
	// The waiter was alive after all: its acknowledgement takes the
	// permit back from the count (two hold one permit, until one
	// releases), and a second one changes nothing.
	for range 2 {
		if err := lua.SemaphoreAck().Run(bg, raw, keys, "PUBLISH", third).Err(); err != nil {
			t.Fatal(err)
		}
		count("-1")
	}
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// serverMicros is the server's clock in microseconds.
func serverMicros(t *testing.T, raw *redis.Client) int64 {
	t.Helper()
	now, err := raw.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	return now.UnixMicro()
}

// TestGoneWaitersDoNotBlock: registry entries of a client that no longer
// listens (its process died) block nobody. A sleeping one, and a watcher,
// are dropped by the release that would wake them; one a release woke,
// which never came to take its permit, once its deadline passes: the
// waiter behind it tries again then.
func TestGoneWaitersDoNotBlock(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	const gone = "0e5f7c1a-3b1d-4c62-9a8e-5f2d1b7c9e40"

	t.Run("asleep", func(t *testing.T) {
		name := redistest.Key(t)
		raw.ZAdd(bg, registryOf(name), redis.Z{Score: 1, Member: gone + ":1:1"}, redis.Z{Score: 2, Member: gone + ":2:1"})
		raw.Set(bg, watcherOf(name), gone+":2:1", time.Minute)
		got := acquiring(bg, semaphore.New(newClient(t, nil), name, nil), 1)
		waitRegistered(t, raw, name, 3)
		if err := semaphore.New(newClient(t, nil), name, nil).Release(bg, 1); err != nil {
			t.Fatal(err)
		}
		if r := within(t, got, 5*time.Second, "waiter behind a gone client's"); r.err != nil {
			t.Fatal(r.err)
		}
		assertNothingLeft(t, raw, name)
		raw.Del(bg, name)
	})

	t.Run("woken", func(t *testing.T) {
		name := redistest.Key(t)
		const grace = 500 * time.Millisecond
		deadline := serverMicros(t, raw) + grace.Microseconds()
		raw.ZAdd(bg, registryOf(name), redis.Z{Score: -float64(deadline), Member: gone + ":1:1"})
		raw.Set(bg, name, 1, 0)
		start := time.Now()
		got := acquiring(bg, semaphore.New(newClient(t, nil), name, nil), 1)
		r := within(t, got, 5*time.Second, "waiter behind a gone waiter's reservation")
		if r.err != nil {
			t.Fatal(r.err)
		}
		took := r.at.Sub(start)
		t.Logf("acquired %v after the gone waiter's reservation was made", took)
		if took < grace/2 {
			t.Fatalf("acquired after %v: the reservation, good for %v, was not kept", took, grace)
		}
		assertNothingLeft(t, raw, name)
		raw.Del(bg, name)
	})
}

// TestNothingLeftBehind: whichever way waits end (a permit taken, a
// cancelled wait, a TryAcquire that gave up, the watcher leaving while
// others wait), relock's keys of the waiters go with the last of them,
// and while they wait the registry has a TTL.
func TestNothingLeftBehind(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	ctx, cancel := context.WithCancel(bg)
	first := acquiring(ctx, semaphore.New(newClient(t, nil), name, nil), 1) // the watcher
	waitRegistered(t, raw, name, 1)
	second := acquiring(bg, semaphore.New(newClient(t, nil), name, nil), 1)
	waitRegistered(t, raw, name, 2)
	if ttl := raw.PTTL(bg, registryOf(name)).Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("registry PTTL = %v while waiters wait, want a TTL", ttl)
	}
	if w := raw.Get(bg, watcherOf(name)).Val(); w == "" {
		t.Fatal("no watcher while waiters wait")
	}
	cancel()
	within(t, first, 2*time.Second, "cancelled watcher")
	waitRegistered(t, raw, name, 1)
	redistest.Eventually(t, 5*time.Second, "the watcher's role passed on", func() bool {
		w := raw.Get(bg, watcherOf(name)).Val()
		return w != "" && raw.ZScore(bg, registryOf(name), w).Err() == nil
	})
	if err := semaphore.New(newClient(t, nil), name, nil).TryAcquire(bg, 1, 200*time.Millisecond); err == nil {
		t.Fatal("TryAcquire took a permit nobody released")
	}
	waitRegistered(t, raw, name, 1)
	if err := semaphore.New(newClient(t, nil), name, nil).Release(bg, 1); err != nil {
		t.Fatal(err)
	}
	if r := within(t, second, 5*time.Second, "last waiter"); r.err != nil {
		t.Fatal(r.err)
	}
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// TestRedissonReleaseWakesRelockWaiters: a release by Redisson (INCRBY,
// then the count on redisson_sc:{<name>} only) of 2 permits lets two of
// four relock waiters on four clients through: the watcher hears it and
// hands the others the permits can satisfy theirs. A relock release
// while they wait hands them theirs first, and publishes there, for
// Redisson's waiters, only what they leave.
func TestRedissonReleaseWakesRelockWaiters(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	got := make(chan int, 4)
	for i := range 4 {
		s := semaphore.New(newClient(t, nil), name, nil)
		go func() {
			if err := s.Acquire(ctx, 1); err == nil {
				got <- i
			}
		}()
	}
	waitRegistered(t, raw, name, 4)
	waitSubscribed(t, raw, channelOf(name), 1) // the watcher
	l := listen(t, raw, channelOf(name))       // a Redisson waiter
	n, err := raw.IncrBy(bg, name, 2).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.Publish(bg, channelOf(name), n).Err(); err != nil {
		t.Fatal(err)
	}
	l.expect("Redisson's release", "2")
	for k := range 2 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 2 relock waiters acquired after Redisson released 2", k)
		}
	}
	select {
	case i := <-got:
		t.Fatalf("a third relock waiter, %d, acquired", i)
	case <-time.After(300 * time.Millisecond):
	}
	if err := semaphore.New(newClient(t, nil), name, nil).Release(bg, 3); err != nil {
		t.Fatal(err)
	}
	l.expect("relock's release of 3, with 2 relock waiters", "1")
	for k := range 2 {
		select {
		case <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("%d of 2 relock waiters acquired after relock's release", k)
		}
	}
	cancel()
	assertNothingLeft(t, raw, name)
	raw.Del(bg, name)
}

// TestRedissonCountsWakeTheWatcher: counts published on the shared
// channel by Redisson (its addPermits down to 0 or below, a release)
// wake one relock waiter, the watcher, whatever the count and however
// many wait on its client; counts below 1 none. Its attempt finds no
// permit (nothing was added), and wakes nobody.
func TestRedissonCountsWakeTheWatcher(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	calls := &redistest.ScriptCounter{}
	rc := srv.Counted(t, calls)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	var waiters []<-chan result
	for i := range 3 {
		waiters = append(waiters, acquiring(ctx, semaphore.New(rc, name, nil), 1))
		waitRegistered(t, raw, name, int64(i+1))
	}
	settle(t, calls)
	for _, tc := range []struct {
		payload string
		wakes   int64
	}{{"0", 0}, {"-2", 0}, {"1", 1}, {"3", 1}} {
		before := calls.N()
		if err := raw.Publish(bg, channelOf(name), tc.payload).Err(); err != nil {
			t.Fatal(err)
		}
		if tc.wakes > 0 {
			redistest.Eventually(t, 2*time.Second, "the watcher's attempt", func() bool { return calls.N() > before })
		}
		time.Sleep(100 * time.Millisecond)
		if d := calls.N() - before; d != tc.wakes {
			t.Fatalf("message %q: %d attempts, want %d", tc.payload, d, tc.wakes)
		}
	}
	cancel()
	for _, w := range waiters {
		within(t, w, 2*time.Second, "cancelled waiter")
	}
	assertNothingLeft(t, raw, name)
}

// TestRegistryLayout pins relock's keys beside Redisson's: a waiter's
// member "<client id>:<tag>:<permits>" scored by when it registered, and
// the watcher's key naming a member, both with a TTL.
func TestRegistryLayout(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	rc := newClient(t, nil)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	got := acquiring(ctx, semaphore.New(rc, name, nil), 5)
	waitRegistered(t, raw, name, 1)
	entries := raw.ZRangeWithScores(bg, registryOf(name), 0, -1).Val()
	m := entries[0].Member.(string)
	if want := rc.ID() + ":g"; len(m) < len(want) || m[:len(want)] != want || m[len(m)-2:] != ":5" {
		t.Fatalf("member %q, want %s<number>:5", m, want)
	}
	if _, err := strconv.ParseUint(m[len(rc.ID())+2:len(m)-2], 10, 64); err != nil {
		t.Fatalf("member %q: tag not g<number>", m)
	}
	if now := serverMicros(t, raw); entries[0].Score <= 0 || entries[0].Score > float64(now) {
		t.Fatalf("score %v, want the registration time in microseconds (now %d)", entries[0].Score, now)
	}
	if w := raw.Get(bg, watcherOf(name)).Val(); w != m {
		t.Fatalf("watcher %q, want the only waiter %q", w, m)
	}
	for _, k := range []string{registryOf(name), watcherOf(name)} {
		if ttl := raw.PTTL(bg, k).Val(); ttl <= 0 {
			t.Fatalf("PTTL %s = %v, want a TTL", k, ttl)
		}
	}
	cancel()
	within(t, got, 2*time.Second, "cancelled waiter")
	assertNothingLeft(t, raw, name)
}
