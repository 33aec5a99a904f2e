package permits_test

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/permits"
)

// goneOf is relock's record of the permit ids given up on semaphore name.
func goneOf(name string) string { return "relock_permits_gone:{" + name + "}" }

// A replyHook loses the replies of chosen calls while it is armed.
type replyHook interface {
	redis.Hook
	Arm(on bool)
}

// lateClient returns a relock client whose acquire scripts' replies hook
// loses while it is armed: relock runs its acquires through the go-redis
// client given (retries off, deadlines on), and so through the hook.
// Replica sync is off, so no acquire goes through another client.
func lateClient(t *testing.T, hook replyHook) *relock.Client {
	t.Helper()
	o := srv.LockOptions()
	o.MaxRetries, o.ContextTimeoutEnabled = -1, true
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(hook)
	return redistest.Relock(t, rdb, &relock.Options{SyncReplicas: relock.SyncOff})
}

// ranHook is a go-redis hook that, while armed, sends the calls of the
// permits' acquire script and loses their replies, whatever they are:
// the acquire ran, its caller hears io.EOF, as when a deadline cut the
// read. redistest.Late's Ran cannot stand in: it passes error replies
// on, and to go-redis the nil reply of an acquire that took its permit
// is one (redis.Nil), which would tell the caller it holds the permit.
type ranHook struct {
	armed atomic.Bool
}

func (h *ranHook) Arm(on bool) { h.armed.Store(on) }

// DialHook is go-redis's: it changes nothing.
func (h *ranHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessPipelineHook is go-redis's: it changes nothing.
func (h *ranHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// ProcessHook sends an armed call of the acquire script and loses its
// reply. A NOSCRIPT answer, which go-redis follows with an EVAL of the
// same call, is passed on: that call did not run.
func (h *ranHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	acquire := lua.PermitsAcquire().Hash()
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if !h.armed.Load() || len(args) < 2 {
			return next(ctx, cmd)
		}
		switch cmd.Name() {
		case "evalsha":
			if args[1] != acquire {
				return next(ctx, cmd)
			}
		case "eval":
			if src, _ := args[1].(string); redis.NewScript(src).Hash() != acquire {
				return next(ctx, cmd)
			}
		default:
			return next(ctx, cmd)
		}
		if err := next(ctx, cmd); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return err
		}
		cmd.SetErr(io.EOF)
		return io.EOF
	}
}

// TestLateAcquire: an acquire whose reply was lost, and whose undo relock
// sent on another connection, leaves no permit and no registration
// whichever of the two the server runs first. "late" plays the order
// seen under churn: the undo (a release of permit X) runs and finds
// nothing, then the acquire adding X runs; "ran" the other: the acquire
// runs, its reply is lost, the undo gives X back. In "takes" a permit is
// free for the acquire; in "registers" none is, and the acquires of a
// wait run late while the holder still holds every permit, where they
// would register the gone waiter. Within 100 ms of the late acquires
// nobody is registered or watching; once the holder released, the count
// is whole, the permits ZSET empty, and a fresh client's TryAcquire(0)
// takes every permit at once.
func TestLateAcquire(t *testing.T) {
	redistest.Parallel(t)
	for _, free := range []bool{true, false} {
		for _, ran := range []bool{false, true} {
			name := map[bool]string{true: "takes", false: "registers"}[free] + "/" +
				map[bool]string{true: "ran", false: "late"}[ran]
			t.Run(name, func(t *testing.T) { lateAcquire(t, free, ran) })
		}
	}
}

func lateAcquire(t *testing.T, free, ran bool) {
	bg := context.Background()
	raw := srv.Client(t)
	name := redistest.Key(t)
	const n = 2
	holder := newSemaphore(t, newClient(t, nil), name, n, nil)
	var held []*permits.Permit
	if !free {
		held = append(held, acquireT(t, holder), acquireT(t, holder))
	}
	late := redistest.NewLate(lua.PermitsAcquire())
	var hook replyHook = late
	if ran {
		hook = &ranHook{}
	}
	gone := permits.New(lateClient(t, hook), name, nil)

	hook.Arm(true)
	wait := time.Duration(0)
	if !free {
		wait = 250 * time.Millisecond
	}
	if _, err := gone.TryAcquire(bg, wait); err == nil {
		t.Fatalf("TryAcquire(%v) with every reply lost took a permit", wait)
	}
	hook.Arm(false)
	played, err := late.Play(bg, raw)
	switch {
	case err != nil:
		t.Fatal(err)
	case !ran && free && played != 1, !ran && !free && played < 2:
		t.Fatalf("%d acquires ran late, want 1 (a try) or at least 2 (a wait's)", played)
	}
	deadline := time.Now().Add(100 * time.Millisecond)
	for raw.Exists(bg, registryOf(name), watcherOf(name)).Val() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, k := range []string{registryOf(name), watcherOf(name)} {
		if got := raw.Exists(bg, k).Val(); got != 0 {
			t.Errorf("%s left after the late acquires: %v", k, lateLeft(raw, k))
		}
	}
	for _, p := range held {
		releaseT(t, p)
	}
	if got := raw.Exists(bg, timeoutOf(name)).Val(); got != 0 {
		t.Errorf("permits left after the late acquires: %v", lateLeft(raw, timeoutOf(name)))
	}
	if got := availableT(t, holder); got != n {
		t.Errorf("%d permits available after the late acquires, want %d", got, n)
	}
	next := permits.New(newClient(t, nil), name, nil)
	for range n {
		p, err := next.TryAcquire(bg, 0)
		if err != nil {
			t.Fatalf("a fresh TryAcquire(0) after the late acquires: %v", err)
		}
		defer releaseT(t, p)
	}
}

// lateLeft describes what key holds, for a failure's message.
func lateLeft(raw *redis.Client, key string) any {
	bg := context.Background()
	if raw.Type(bg, key).Val() == "zset" {
		return raw.ZRangeWithScores(bg, key, 0, -1).Val()
	}
	return raw.Get(bg, key).Val()
}

// TestGoneRecord pins relock's record of given-up permit ids: a ZSET at
// relock_permits_gone:{<name>} (relock_permits_gone:<name> for a name
// with a hash tag, in the name's slot) of the raw ids of undone acquires,
// each scored the server's now plus the lease at its undo, and a TTL of
// the lease; a record whose time has come is trimmed by the next undo,
// and the key goes with the last one. Redisson's keys are unchanged: the
// undone acquires leave the count and nothing else of Redisson's.
//
// Every time is the server's, read around each step: a step the
// scheduler delays is measured, not assumed. The second undo comes half
// a lease after the first and the third once the first record's time
// has come, so each has half a lease to land in before the record it
// must keep has its time too.
func TestGoneRecord(t *testing.T) {
	redistest.Parallel(t)
	const lease = time.Second
	const leaseMs = int64(lease / time.Millisecond)
	plain, tagged := redistest.Key(t), "{user:"+redistest.Key(t)+"}:cart"
	for kind, name := range map[string]string{"plain": plain, "tagged": tagged} {
		gone := goneOf(name)
		if kind == "tagged" {
			gone = "relock_permits_gone:" + tagged
		}
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			bg := context.Background()
			raw := srv.Client(t)
			newSemaphore(t, newClient(t, nil), name, 1, nil)
			hook := &ranHook{}
			s := permits.New(lateClient(t, hook), name, &permits.Options{Lease: lease})
			// undone runs an acquire whose reply is lost, and returns the
			// server's time before and after it.
			undone := func() (before, after int64) {
				t.Helper()
				before = serverMillis(t, raw)
				hook.Arm(true)
				_, err := s.TryAcquire(bg, 0)
				hook.Arm(false)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("TryAcquire(0) with its reply lost = %v, want io.EOF", err)
				}
				return before, serverMillis(t, raw)
			}
			scores := func() []int64 {
				t.Helper()
				var out []int64
				for _, z := range raw.ZRangeWithScores(bg, gone, 0, -1).Val() {
					if len(z.Member.(string)) != 16 {
						t.Fatalf("member %q of %s, want a 16-byte id", z.Member, gone)
					}
					out = append(out, int64(z.Score))
				}
				return out
			}

			b1, a1 := undone()
			if typ := raw.Type(bg, gone).Val(); typ != "zset" {
				t.Fatalf("TYPE %s = %s, want zset", gone, typ)
			}
			first := scores()
			if len(first) != 1 {
				t.Fatalf("%s scores %v, want one record", gone, first)
			}
			s1 := first[0]
			if s1 < b1+leaseMs || s1 > a1+leaseMs {
				t.Fatalf("record due at %d, want the lease %v after its undo, which ran within %d..%d", s1, lease, b1, a1)
			}
			// The key expires with its record: now + PTTL is the record's
			// time, to a few ms on redis-server; miniredis moves its TTLs
			// on a 5 ms tick (redistest's clock), later on a loaded machine.
			slack := int64(5)
			if !srv.Real() {
				slack = 100
			}
			x := serverMillis(t, raw)
			pttl := raw.PTTL(bg, gone).Val()
			y := serverMillis(t, raw)
			ms := pttl.Milliseconds()
			if pttl > lease || s1 < x+ms-slack || s1 > y+ms+slack {
				t.Fatalf("PTTL %s = %v read within %d..%d: expires at about %d, want the record's time %d", gone, pttl, x, y, y+ms, s1)
			}

			time.Sleep(lease / 2)
			_, a2 := undone()
			if a2 >= s1 {
				t.Fatalf("second undo done at %d, not before the first record's time %d: the machine stalled for half a lease (%v)", a2, s1, lease/2)
			}
			second := scores()
			if len(second) != 2 || second[0] != s1 {
				t.Fatalf("%s scores %v after a second undo within the lease, want %d and the new one", gone, second, s1)
			}
			s2 := second[1]

			redistest.Eventually(t, 2*lease, "the first record's time", func() bool { return serverMillis(t, raw) > s1 })
			_, a3 := undone()
			if a3 >= s2 {
				t.Fatalf("third undo done at %d, not before the second record's time %d: the machine stalled for half a lease (%v)", a3, s2, lease/2)
			}
			if third := scores(); len(third) != 2 || third[0] != s2 {
				t.Fatalf("%s scores %v after the first record's time, want %d (the first trimmed) and the new one", gone, third, s2)
			}
			redistest.Eventually(t, 3*lease, "the record gone with its last member", func() bool {
				return raw.Exists(bg, gone).Val() == 0
			})
			checkCount(t, raw, name, "1")
			if got := raw.Exists(bg, timeoutOf(name)).Val(); got != 0 {
				t.Fatalf("permits ZSET left: %v", lateLeft(raw, timeoutOf(name)))
			}
		})
	}
}
