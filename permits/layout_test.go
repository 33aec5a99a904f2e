package permits_test

import (
	"context"
	"encoding/hex"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// idForm is Redisson's shown form of a permit id: ByteBufUtil.hexDump of
// 16 random bytes.
var idForm = regexp.MustCompile(`^[0-9a-f]{32}$`)

// checkPermits asserts that the permits ZSET of name holds exactly ids
// (in the order given), each raw as Redisson writes it and scored at
// most lease and at least lease - slack after the server's now.
func checkPermits(t *testing.T, raw *redis.Client, name string, lease, slack time.Duration, ids ...string) {
	t.Helper()
	bg := context.Background()
	// The scores first: a renewal landing between the two reads then
	// makes a permit look shorter, never longer, than its lease.
	zs := raw.ZRangeWithScores(bg, timeoutOf(name), 0, -1).Val()
	now := serverMillis(t, raw)
	if len(zs) != len(ids) {
		t.Fatalf("ZRANGE %s = %v, want %d permits", timeoutOf(name), zs, len(ids))
	}
	for i, z := range zs {
		member := z.Member.(string)
		if len(member) != 16 || hex.EncodeToString([]byte(member)) != ids[i] {
			t.Fatalf("permit member %x, want the 16 raw bytes of %s", member, ids[i])
		}
		left := time.Duration(int64(z.Score)-now) * time.Millisecond
		if left > lease || left < lease-slack {
			t.Fatalf("permit %s expires %v from the server's now, want within %v of the lease %v", ids[i], left, slack, lease)
		}
	}
}

// checkCount asserts the STRING count of name.
func checkCount(t *testing.T, raw *redis.Client, name, want string) {
	t.Helper()
	bg := context.Background()
	if typ := raw.Type(bg, name).Val(); typ != "string" {
		t.Fatalf("TYPE %s = %s, want string", name, typ)
	}
	if got := raw.Get(bg, name).Val(); got != want {
		t.Fatalf("GET %s = %q, want %q", name, got, want)
	}
}

// TestLayout pins Redisson's RPermitExpirableSemaphore layout after each
// operation: the count STRING at <name>, the permits ZSET
// {<name>}:timeout (raw 16-byte ids, expiry scores), and the messages on
// redisson_sc:{<name>}.
func TestLayout(t *testing.T) {
	rc := newClient(t, nil)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	sub := subscribe(t, raw, channelOf(name))
	s := permits.New(rc, name, nil)

	if ok, err := s.TrySetPermits(bg, 2); err != nil || !ok {
		t.Fatalf("TrySetPermits(2) = %v, %v", ok, err)
	}
	checkCount(t, raw, name, "2")
	if msg := nextMessage(t, sub); msg != "2" {
		t.Fatalf("TrySetPermits published %q, want 2", msg)
	}
	if ok, err := s.TrySetPermits(bg, 5); err != nil || ok {
		t.Fatalf("second TrySetPermits = %v, %v; want false", ok, err)
	}
	checkCount(t, raw, name, "2")

	p := acquireT(t, s)
	if !idForm.MatchString(p.ID()) {
		t.Fatalf("permit id %q, want 32 lower-case hex digits", p.ID())
	}
	checkCount(t, raw, name, "1")
	checkPermits(t, raw, name, relock.DefaultWatchdogTimeout, time.Second, p.ID())
	if ttl := raw.PTTL(bg, timeoutOf(name)).Val(); ttl != -1 {
		t.Fatalf("permits ZSET PTTL %v, want none (the count has none)", ttl)
	}
	q := acquireT(t, s)
	checkCount(t, raw, name, "0")
	if n := raw.ZCard(bg, timeoutOf(name)).Val(); n != 2 {
		t.Fatalf("ZCARD = %d after two acquires", n)
	}

	releaseT(t, p)
	checkCount(t, raw, name, "1")
	checkPermits(t, raw, name, relock.DefaultWatchdogTimeout, time.Second, q.ID())
	if msg := nextMessage(t, sub); msg != "1" {
		t.Fatalf("Release published %q, want the new count 1", msg)
	}
	if p.Context().Err() == nil {
		t.Fatal("released permit's context not cancelled")
	}
	if err := p.Release(bg); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("second Release = %v, want ErrNotHeld", err)
	}
	checkCount(t, raw, name, "1")
	releaseT(t, q)
	checkCount(t, raw, name, "2")
	if msg := nextMessage(t, sub); msg != "2" {
		t.Fatalf("Release published %q, want the new count 2", msg)
	}
	if n := raw.Exists(bg, timeoutOf(name)).Val(); n != 0 {
		t.Fatal("permits ZSET left after the last release")
	}

	// Redisson's addPermits publishes the delta, and only a positive one.
	if err := s.AddPermits(bg, 3); err != nil {
		t.Fatal(err)
	}
	checkCount(t, raw, name, "5")
	if msg := nextMessage(t, sub); msg != "3" {
		t.Fatalf("AddPermits(3) published %q, want the delta 3", msg)
	}
	if err := s.AddPermits(bg, -4); err != nil {
		t.Fatal(err)
	}
	checkCount(t, raw, name, "1")
	noMessage(t, sub, 100*time.Millisecond)
	if n := availableT(t, s); n != 1 {
		t.Fatalf("AvailablePermits = %d, want 1", n)
	}
}

// TestLayoutFixedLease: a fixed lease is the permit's score, and its
// context's deadline.
func TestLayoutFixedLease(t *testing.T) {
	raw := srv.Client(t)
	name := redistest.Key(t)
	const lease = 10 * time.Second
	s := newSemaphore(t, newClient(t, nil), name, 1, &permits.Options{Lease: lease})
	called := time.Now()
	p := acquireT(t, s)
	returned := time.Now()
	defer releaseT(t, p)
	checkPermits(t, raw, name, lease, time.Second, p.ID())
	// The deadline rests on the acquire's send time, which precedes the
	// score the server set (the same host's clock here).
	deadline, ok := p.Context().Deadline()
	if !ok || deadline.Before(called.Add(lease)) || deadline.After(returned.Add(lease)) {
		t.Fatalf("permit context deadline %v after Acquire was called (%v), want the lease %v", deadline.Sub(called), ok, lease)
	}
	score := raw.ZScore(context.Background(), timeoutOf(name), rawID(t, p.ID())).Val()
	if deadline.UnixMilli() > int64(score) {
		t.Fatalf("permit context deadline %d ms past the permit's expiry %d", deadline.UnixMilli(), int64(score))
	}
}

// TestLayoutHashTag: for a name with its own hash tag the derived names
// keep it as it is, as Redisson's suffixName and prefixName do.
func TestLayoutHashTag(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := "{" + redistest.Key(t) + "}:jobs"
	sub := subscribe(t, raw, "redisson_sc:"+name)
	s := newSemaphore(t, newClient(t, nil), name, 1, nil)
	if msg := nextMessage(t, sub); msg != "1" {
		t.Fatalf("message %q on redisson_sc:%s, want 1", msg, name)
	}
	p := acquireT(t, s)
	if n := raw.ZCard(bg, name+":timeout").Val(); n != 1 {
		t.Fatalf("ZCARD %s:timeout = %d, want 1", name, n)
	}
	releaseT(t, p)
	if msg := nextMessage(t, sub); msg != "1" {
		t.Fatalf("release message %q on redisson_sc:%s, want 1", msg, name)
	}
}

// TestLayoutCountTTL: when the count key has a TTL (a Redisson client's
// expire), an acquire gives the permits ZSET the same one.
func TestLayoutCountTTL(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	s := newSemaphore(t, newClient(t, nil), name, 1, nil)
	raw.PExpire(bg, name, time.Minute)
	p := acquireT(t, s)
	defer releaseT(t, p)
	if ttl := raw.PTTL(bg, timeoutOf(name)).Val(); ttl <= 50*time.Second || ttl > time.Minute {
		t.Fatalf("permits ZSET PTTL %v, want the count's, about 1m", ttl)
	}
}

// TestLayoutRenewal: the watchdog moves a held permit's score to the
// server's now plus the watchdog timeout, every third of it.
func TestLayoutRenewal(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	const timeout = 900 * time.Millisecond
	s := newSemaphore(t, newClient(t, &relock.Options{WatchdogTimeout: timeout}), name, 1, nil)
	p := acquireT(t, s)
	defer releaseT(t, p)
	first := raw.ZScore(bg, timeoutOf(name), rawID(t, p.ID())).Val()
	for range 3 {
		time.Sleep(timeout / 2)
		// Renewed a round ago at most, a round being a third of the
		// timeout: the slack allows a late round.
		checkPermits(t, raw, name, timeout, timeout-time.Millisecond, p.ID())
	}
	if now := raw.ZScore(bg, timeoutOf(name), rawID(t, p.ID())).Val(); now < first+float64(timeout.Milliseconds()) {
		t.Fatalf("score %v after 3 half-leases, want at least one lease past the first, %v", now, first)
	}
}
