package reentrant_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

func registryOf(name string) string { return "relock_lock_waiters:{" + name + "}" }

// TestReleaseHandsOver: with relock waiters on five clients and nobody
// else listening, each release grants the lock to the waiter registered
// longest, which runs no script, and no other client runs one; the
// registry empties as they acquire.
func TestReleaseHandsOver(t *testing.T) {
	testRelease(t, false)
}

// TestReleaseWakesOneWaiter: with a Redisson waiter listening on the
// lock's channel as well, a release is not granted (Redisson's waiter
// must get its chance): it publishes "0" there and wakes the relock waiter
// registered longest alone, which runs one attempt and takes the lock.
func TestReleaseWakesOneWaiter(t *testing.T) {
	testRelease(t, true)
}

func testRelease(t *testing.T, redisson bool) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := reentrant.New(newClient(t, nil), name, nil)
	hctx := redistest.Lock(t, holder, bg)
	var sub *redis.PubSub
	if redisson {
		sub = raw.Subscribe(bg, channelOf(name))
		defer sub.Close()
		if _, err := sub.Receive(bg); err != nil {
			t.Fatal(err)
		}
	}

	const waiters = 5
	counts := make([]*redistest.ScriptCounter, waiters)
	acquired := make([]chan context.Context, waiters)
	muts := make([]*reentrant.Mutex, waiters)
	for i := range waiters {
		counts[i] = &redistest.ScriptCounter{}
		muts[i] = reentrant.New(srv.Counted(t, counts[i]), name, nil)
		acquired[i] = make(chan context.Context, 1)
		go func() {
			ctx, err := muts[i].Lock(bg)
			if err != nil {
				t.Error(err)
			}
			acquired[i] <- ctx
		}()
		redistest.Eventually(t, 2*time.Second, "waiter registered", func() bool { return raw.ZCard(bg, registryOf(name)).Val() == int64(i+1) })
		// Registration scores are server microseconds: keep them apart.
		time.Sleep(time.Millisecond)
	}

	release := func() error { return holder.Unlock(hctx) }
	for i := range waiters {
		before := make([]int64, waiters)
		for j := range waiters {
			before[j] = counts[j].N()
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		var ctx context.Context
		select {
		case ctx = <-acquired[i]:
		case <-time.After(2 * time.Second):
			t.Fatalf("release %d: waiter %d, registered longest, not woken", i, i)
		}
		time.Sleep(50 * time.Millisecond) // room for any other waiter to try
		if redisson {
			rctx, cancel := context.WithTimeout(bg, 2*time.Second)
			msg, err := sub.ReceiveMessage(rctx)
			cancel()
			if err != nil || msg.Payload != "0" {
				t.Fatalf("release %d: Redisson's waiter got %v, %v; want \"0\"", i, msg, err)
			}
		}
		for j := i; j < waiters; j++ {
			want := int64(0)
			if j == i && redisson {
				want = 1
			}
			if d := counts[j].N() - before[j]; d != want {
				t.Fatalf("release %d: waiter %d ran %d scripts, want %d", i, j, d, want)
			}
		}
		m := muts[i]
		release = func() error { return m.Unlock(ctx) }
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if n := raw.Exists(bg, name, registryOf(name)).Val(); n != 0 {
		t.Fatalf("%d of the lock and its registry left after the last release", n)
	}
}

// lockOnce locks mu in a goroutine, unlocks it at once, and reports the
// outcome.
func lockOnce(mu *reentrant.Mutex) <-chan error {
	got := make(chan error, 1)
	go func() {
		ctx, err := mu.Lock(context.Background())
		if err == nil {
			err = mu.Unlock(ctx)
		}
		got <- err
	}()
	return got
}

// acquired fails the test unless got reports a lock and unlock within 2s.
func acquired(t *testing.T, got <-chan error, what string) {
	t.Helper()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal(what)
	}
}

// TestDeadWaiterPassedOver: a registered waiter whose client no longer
// listens (its process died) is dropped by the release, which wakes the
// next one.
func TestDeadWaiterPassedOver(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := reentrant.New(newClient(t, nil), name, nil)
	hctx := redistest.Lock(t, holder, bg)
	// A relock-shaped field (a version-8 client id) registered first,
	// with nobody on its client's channel.
	id := uuid.New()
	id[6] = id[6]&0x0f | 0x80
	dead := id.String() + ":1"
	raw.ZAdd(bg, registryOf(name), redis.Z{Score: 1, Member: dead})

	got := lockOnce(reentrant.New(newClient(t, nil), name, nil))
	redistest.Eventually(t, 2*time.Second, "waiter registered", func() bool { return raw.ZCard(bg, registryOf(name)).Val() == 2 })
	redistest.Unlock(t, holder, hctx)
	acquired(t, got, "live waiter not woken past the dead one")
	if n := raw.Exists(bg, name, registryOf(name)).Val(); n != 0 {
		t.Fatalf("%d of the lock and its registry left", n)
	}
}

// TestRedissonHolderWakesRelockWaiter: a waiter behind a lock held by a
// Redisson client (its field a version-4 UUID's) also listens on the
// lock's channel, where Redisson's unlock publishes "0", and takes the
// lock at once when that unlock comes.
func TestRedissonHolderWakesRelockWaiter(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	// Redisson's acquire (RedissonLock.tryLockInnerAsync).
	raw.HSet(bg, name, uuid.NewString()+":1", 1)
	raw.PExpire(bg, name, 30*time.Second)

	got := lockOnce(reentrant.New(newClient(t, nil), name, nil))
	redistest.Eventually(t, 2*time.Second, "waiter on the lock's channel", func() bool {
		return raw.PubSubNumSub(bg, channelOf(name)).Val()[channelOf(name)] == 1
	})
	// Redisson's unlock of its last hold.
	raw.Del(bg, name)
	raw.Publish(bg, channelOf(name), "0")
	acquired(t, got, "relock waiter not woken by the Redisson unlock")
}

// TestWaitJoinsLiveChannel: a Mutex whose last Lock found the lock free
// tries first without looking for a live channel to join, and tries
// again once subscribed; one whose last Lock found it taken joins the
// channel, still lingering from that wait, before its first attempt,
// which then counts.
func TestWaitJoinsLiveChannel(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	holder := reentrant.New(newClient(t, nil), name, nil)
	calls := &redistest.ScriptCounter{}
	mu := reentrant.New(srv.Counted(t, calls), name, nil)

	// attempts returns the script calls mu's Lock makes on the held lock
	// until it is registered as a waiter.
	attempts := func() int64 {
		t.Helper()
		hctx := redistest.Lock(t, holder, bg)
		before := calls.N()
		acquired := make(chan context.Context, 1)
		go func() {
			ctx, err := mu.Lock(bg)
			if err != nil {
				t.Error(err)
			}
			acquired <- ctx
		}()
		redistest.Eventually(t, 2*time.Second, "waiter registered", func() bool { return raw.ZCard(bg, registryOf(name)).Val() == 1 })
		n := calls.N() - before
		redistest.Unlock(t, holder, hctx)
		select {
		case ctx := <-acquired:
			redistest.Unlock(t, mu, ctx)
		case <-time.After(2 * time.Second):
			t.Fatal("the waiter was not handed the lock")
		}
		return n
	}
	if n := attempts(); n != 2 {
		t.Errorf("a fresh Mutex's wait made %d attempts, want 2: one not listening, one subscribed", n)
	}
	if n := attempts(); n != 1 {
		t.Errorf("a wait after a wait made %d attempts, want 1, on the lingering channel", n)
	}
	redistest.Unlock(t, mu, redistest.Lock(t, mu, bg))
	if n := attempts(); n != 2 {
		t.Errorf("a wait after a free acquire made %d attempts, want 2", n)
	}
}
