package permits_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// redissonNoExpiry is the score Redisson gives a permit without a lease
// (RedissonPermitExpirableSemaphore's nonExpirableTimeout).
const redissonNoExpiry = 922337203685477

// A redisson plays a Redisson client from the layout's facts, with raw
// commands: the effects of its scripts, not their text.
type redisson struct {
	t   *testing.T
	raw *redis.Client
}

// acquire takes a permit of name as Redisson's tryAcquire(leaseTime)
// does: the count decremented, a random 16-byte id scored with the
// client's now + lease (lease 0: no lease). It returns the id as
// Redisson shows it.
func (r redisson) acquire(name string, lease time.Duration) string {
	r.t.Helper()
	bg := context.Background()
	var id [16]byte
	_, _ = rand.Read(id[:])
	score := float64(redissonNoExpiry)
	if lease > 0 {
		score = float64(time.Now().Add(lease).UnixMilli())
	}
	if err := r.raw.DecrBy(bg, name, 1).Err(); err != nil {
		r.t.Fatal(err)
	}
	if err := r.raw.ZAdd(bg, timeoutOf(name), redis.Z{Score: score, Member: string(id[:])}).Err(); err != nil {
		r.t.Fatal(err)
	}
	return hex.EncodeToString(id[:])
}

// release gives back permit id of name as Redisson's release(id) does:
// ZREM; if it was there, INCRBY 1 and publish the new count. It reports
// whether the permit was there.
func (r redisson) release(name, id string) bool {
	r.t.Helper()
	bg := context.Background()
	if r.raw.ZRem(bg, timeoutOf(name), rawID(r.t, id)).Val() != 1 {
		return false
	}
	value := r.raw.IncrBy(bg, name, 1).Val()
	if err := r.raw.Publish(bg, channelOf(name), value).Err(); err != nil {
		r.t.Fatal(err)
	}
	return true
}

// TestRedissonPermitsCounted: permits a Redisson client holds count
// against relock's acquires; one with a lease is reclaimed when it
// expires, and a waiter, which no message wakes then, retries at that
// moment (the earliest expiry), reclaims it and takes it; the reclaim
// publishes the count, as Redisson's does.
func TestRedissonPermitsCounted(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	java := redisson{t, raw}
	s := newSemaphore(t, newClient(t, nil), name, 2, nil)
	java.acquire(name, time.Hour)
	if n := availableT(t, s); n != 1 {
		t.Fatalf("AvailablePermits = %d with a Redisson permit out of 2, want 1", n)
	}
	p := acquireT(t, s)
	defer releaseT(t, p)
	if _, err := s.TryAcquire(bg, 0); !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("TryAcquire(0) with both permits out = %v, want ErrNotAcquired", err)
	}

	// A Redisson permit with a short lease, taken as the count is raised.
	if err := raw.IncrBy(bg, name, 1).Err(); err != nil {
		t.Fatal(err)
	}
	const lease = 400 * time.Millisecond
	java.acquire(name, lease)
	taken := time.Now()
	sub := subscribe(t, raw, channelOf(name))
	q, err := s.TryAcquire(bg, 5*time.Second)
	if err != nil {
		t.Fatalf("TryAcquire with a Redisson permit expiring: %v", err)
	}
	defer releaseT(t, q)
	took := time.Since(taken)
	t.Logf("took the Redisson permit %v after it was taken with a %v lease", took, lease)
	if took < lease-50*time.Millisecond || took > lease+time.Second {
		t.Fatalf("took the Redisson permit %v after it was taken with a %v lease", took, lease)
	}
	if msg := nextMessage(t, sub); msg != "1" {
		t.Fatalf("reclaim published %q, want the count 1", msg)
	}
	checkCount(t, raw, name, "0")
	if n := raw.ZCard(bg, timeoutOf(name)).Val(); n != 3 {
		t.Fatalf("ZCARD = %d, want 3: the hour-long Redisson permit and two of relock's", n)
	}
}

// TestRedissonPermitWithoutLease: a Redisson permit without a lease is
// never reclaimed, and a waiter blocked by it sends nothing while it
// waits (no expiry to wake for) until Redisson's release, whose message
// wakes it at once.
func TestRedissonPermitWithoutLease(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	java := redisson{t, raw}
	newSemaphore(t, newClient(t, nil), name, 1, nil)
	id := java.acquire(name, 0)

	var calls redistest.ScriptCounter
	s := permits.New(srv.Counted(t, &calls), name, nil)
	type result struct {
		p   *permits.Permit
		at  time.Time
		err error
	}
	got := make(chan result, 1)
	go func() {
		p, err := s.TryAcquire(bg, 10*time.Second)
		got <- result{p, time.Now(), err}
	}()
	waitSubscribed(t, raw, name, 1)
	time.Sleep(100 * time.Millisecond) // the attempt after subscribing
	before := calls.N()
	time.Sleep(time.Second)
	if n := calls.N() - before; n != 0 {
		t.Fatalf("the waiter made %d script calls in 1s of waiting", n)
	}
	if n := availableT(t, s); n != 0 {
		t.Fatalf("AvailablePermits = %d: a permit without a lease was reclaimed", n)
	}
	released := time.Now()
	if !java.release(name, id) {
		t.Fatal("Redisson's permit gone")
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	defer releaseT(t, r.p)
	took := r.at.Sub(released)
	t.Logf("woken and acquired %v after Redisson's release", took)
	if took > time.Second {
		t.Fatalf("acquired %v after Redisson's release: not woken by its message", took)
	}
}

// TestReleaseToRedisson: relock's release publishes the new count, what
// Redisson's listener reads as the number of its waiters to wake, and a
// relock permit is released by id as Redisson's release(id) does it.
func TestReleaseToRedisson(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	java := redisson{t, raw}
	const timeout = time.Second
	s := newSemaphore(t, newClient(t, &relock.Options{WatchdogTimeout: timeout}), name, 3, nil)
	sub := subscribe(t, raw, channelOf(name))
	p, q := acquireT(t, s), acquireT(t, s)
	releaseT(t, p)
	if msg := nextMessage(t, sub); msg != "2" {
		t.Fatalf("Release published %q, want the new count 2", msg)
	}
	// Redisson's release(id) of a relock permit: the member is the raw id.
	if !java.release(name, q.ID()) {
		t.Fatal("Redisson's release did not find the relock permit by its id")
	}
	if msg := nextMessage(t, sub); msg != "3" {
		t.Fatalf("Redisson's release published %q, want 3", msg)
	}
	// relock's release of a Redisson permit.
	id := java.acquire(name, time.Hour)
	if err := s.Release(bg, id); err != nil {
		t.Fatalf("Release of a Redisson permit: %v", err)
	}
	if msg := nextMessage(t, sub); msg != "3" {
		t.Fatalf("Release published %q, want 3", msg)
	}
	if ok, err := s.TryRelease(bg, id); err != nil || ok {
		t.Fatalf("TryRelease of a released permit = %v, %v; want false", ok, err)
	}
	// The holder on this client learns that its permit went.
	select {
	case <-q.Context().Done():
	case <-time.After(timeout/3 + 2*time.Second): // the next renewal
		t.Fatal("holder's context live after its permit was released by id elsewhere")
	}
	if !errors.Is(context.Cause(q.Context()), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(q.Context()))
	}
}

// TestUpdateLease: Redisson's updateLeaseTime on a Redisson permit moves
// its score; on a permit not held it reports false.
func TestUpdateLease(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	java := redisson{t, raw}
	s := newSemaphore(t, newClient(t, nil), name, 1, nil)
	id := java.acquire(name, time.Hour)
	ok, err := s.UpdateLease(bg, id, 10*time.Second)
	if err != nil || !ok {
		t.Fatalf("UpdateLease = %v, %v", ok, err)
	}
	checkPermits(t, raw, name, 10*time.Second, time.Second, id)
	if !java.release(name, id) {
		t.Fatal("permit gone")
	}
	if ok, err := s.UpdateLease(bg, id, 10*time.Second); err != nil || ok {
		t.Fatalf("UpdateLease of a released permit = %v, %v; want false", ok, err)
	}
	if n := raw.ZCard(bg, timeoutOf(name)).Val(); n != 0 {
		t.Fatal("UpdateLease of a released permit added it")
	}
}
