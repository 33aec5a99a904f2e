package fence_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fence"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// lastKey is where the guard keeps resource's last token (the package
// doc), for resources without a hash tag of their own.
func lastKey(resource string) string { return "relock_fence:{" + resource + "}" }

// wantStale fails t unless err is a *StaleError for token with last.
func wantStale(t *testing.T, err error, token, last int64) {
	t.Helper()
	var stale *fence.StaleError
	if !errors.Is(err, fence.ErrStale) || !errors.As(err, &stale) {
		t.Fatalf("write with token %d: %v, want ErrStale", token, err)
	}
	if stale.Token != token || stale.Last != last {
		t.Fatalf("StaleError{Token: %d, Last: %d}, want {%d, %d}", stale.Token, stale.Last, token, last)
	}
}

// TestRedisOrder runs one resource's writes in sequence: increasing and
// equal tokens are accepted, lower ones refused, with the value and the
// recorded token left as the last accepted write made them. Tokens past
// 2^53, where Lua's numbers lose precision, and of different lengths
// ("9" sorts after "10" as a string) are compared exactly.
func TestRedisOrder(t *testing.T) {
	ctx := context.Background()
	rdb := srv.Client(t)
	g := fence.NewRedis(rdb)
	const big = 1 << 53
	for _, seq := range [][]struct {
		token int64
		ok    bool
	}{
		{{5, true}, {5, true}, {7, true}, {6, false}, {0, false}, {8, true}},
		{{0, true}, {0, true}, {1, true}, {0, false}},
		{{10, true}, {9, false}, {100, true}, {99, false}},
		{{big, true}, {big + 1, true}, {big, false}, {big + 1, true}},
		{{math.MaxInt64 - 1, true}, {math.MaxInt64, true}, {math.MaxInt64 - 1, false}},
	} {
		res := redistest.Key(t)
		key := "{" + res + "}:value"
		want, last := "", int64(-1)
		for i, w := range seq {
			v := strconv.Itoa(i)
			err := g.Set(ctx, res, w.token, key, v, 0)
			if w.ok {
				if err != nil {
					t.Fatalf("%s: write %d, token %d: %v", res, i, w.token, err)
				}
				want, last = v, w.token
			} else {
				wantStale(t, err, w.token, last)
			}
			if got := rdb.Get(ctx, key).Val(); got != want {
				t.Fatalf("%s: after write %d, value %q, want %q", res, i, got, want)
			}
			if got := rdb.Get(ctx, lastKey(res)).Val(); got != strconv.FormatInt(last, 10) {
				t.Fatalf("%s: after write %d, last token %q, want %d", res, i, got, last)
			}
		}
	}
}

// TestRedisStaleWritesNothing checks each kind of write: a stale one
// changes neither its key nor the recorded token.
func TestRedisStaleWritesNothing(t *testing.T) {
	ctx := context.Background()
	rdb := srv.Client(t)
	g := fence.NewRedis(rdb)
	for _, w := range []struct {
		name  string
		write func(res string, token int64, key string) error
		read  func(key string) string
	}{
		{"Set", func(res string, token int64, key string) error {
			return g.Set(ctx, res, token, key, token, 0)
		}, func(key string) string { return rdb.Get(ctx, key).Val() }},
		{"HSet", func(res string, token int64, key string) error {
			return g.HSet(ctx, res, token, key, map[string]any{"token": token, "f" + strconv.FormatInt(token, 10): 1})
		}, func(key string) string { return fmt.Sprint(rdb.HGetAll(ctx, key).Val()) }},
		{"XAdd", func(res string, token int64, key string) error {
			_, err := g.XAdd(ctx, res, token, key, map[string]any{"token": token})
			return err
		}, func(key string) string { return fmt.Sprint(rdb.XRange(ctx, key, "-", "+").Val()) }},
	} {
		t.Run(w.name, func(t *testing.T) {
			res := redistest.Key(t)
			key := "{" + res + "}:data"
			if err := w.write(res, 10, key); err != nil {
				t.Fatal(err)
			}
			before := w.read(key)
			wantStale(t, w.write(res, 9, key), 9, 10)
			if after := w.read(key); after != before {
				t.Fatalf("a stale write changed %s: %s, was %s", key, after, before)
			}
			if got := rdb.Get(ctx, lastKey(res)).Val(); got != "10" {
				t.Fatalf("last token %q after a stale write, want 10", got)
			}
		})
	}
}

// TestRedisFailedWriteKeepsToken: a write that Redis refuses (WRONGTYPE)
// records no token, so it refuses no later write.
func TestRedisFailedWriteKeepsToken(t *testing.T) {
	ctx := context.Background()
	rdb := srv.Client(t)
	g := fence.NewRedis(rdb)
	res := redistest.Key(t)
	key := "{" + res + "}:string"
	if err := g.Set(ctx, res, 1, key, "v", 0); err != nil {
		t.Fatal(err)
	}
	err := g.HSet(ctx, res, 5, key, map[string]any{"f": "v"})
	if err == nil || errors.Is(err, fence.ErrStale) {
		t.Fatalf("HSet on a string: %v, want WRONGTYPE", err)
	}
	if got := rdb.Get(ctx, lastKey(res)).Val(); got != "1" {
		t.Fatalf("last token %q after a failed write, want 1", got)
	}
	if err := g.Set(ctx, res, 2, key, "w", 0); err != nil {
		t.Fatal(err)
	}
}

// TestRedisSetTTL: Set's expiration is SET's: a TTL, KEEPTTL, or none.
func TestRedisSetTTL(t *testing.T) {
	ctx := context.Background()
	rdb := srv.Client(t)
	g := fence.NewRedis(rdb)
	res := redistest.Key(t)
	key := "{" + res + "}:value"
	for _, c := range []struct {
		expiration time.Duration
		min, max   time.Duration // of the PTTL after the Set
	}{
		{10 * time.Second, 9 * time.Second, 10 * time.Second},
		{redis.KeepTTL, 9 * time.Second, 10 * time.Second},
		{0, -1, -1}, // PTTL -1: no TTL
	} {
		if err := g.Set(ctx, res, 1, key, "v", c.expiration); err != nil {
			t.Fatal(err)
		}
		if ttl := rdb.PTTL(ctx, key).Val(); ttl < c.min || ttl > c.max {
			t.Fatalf("PTTL %v after Set with expiration %v, want %v..%v", ttl, c.expiration, c.min, c.max)
		}
	}
}

// TestRedisBadArguments: keys outside the resource's hash tag, the token
// key itself, bad resources, negative tokens and expirations, and empty
// values are errors before anything is sent.
func TestRedisBadArguments(t *testing.T) {
	ctx := context.Background()
	rdb := srv.Client(t)
	g := fence.NewRedis(rdb)
	for _, c := range []struct {
		resource, key string
		token         int64
		want          error // nil: accepted
	}{
		{"bad:a", "{bad:a}:total", 1, nil},
		{"bad:a", "{bad:a}", 1, nil},
		{"bad:{b}", "items:{b}", 1, nil},
		{"bad:{b}", "{b}", 1, nil},
		{"bad:a", "bad:a:total", 1, relock.ErrInvalidArgument},
		{"bad:a", "{bad:a:total}", 1, relock.ErrInvalidArgument},
		{"bad:{b}", "{bad:{b}}:total", 1, relock.ErrInvalidArgument},
		{"bad:a", "relock_fence:{bad:a}", 1, relock.ErrInvalidArgument},
		{"bad:{b}", "relock_fence:bad:{b}", 1, relock.ErrInvalidArgument},
		{"bad:a", "{bad:a}:total", -1, relock.ErrInvalidArgument},
		{"", "{}:total", 1, relock.ErrInvalidName},
		{"bad:{", "{bad:{}", 1, relock.ErrInvalidName},
	} {
		err := g.Set(ctx, c.resource, c.token, c.key, "v", 0)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("Set(%q, %d, %q) = %v, want %v", c.resource, c.token, c.key, err, c.want)
		}
	}
	if err := g.Set(ctx, "bad:a", 1, "{bad:a}:total", "v", -time.Second); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("Set with a negative expiration = %v", err)
	}
	if err := g.HSet(ctx, "bad:a", 1, "{bad:a}:h", nil); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("HSet of no values = %v", err)
	}
	if _, err := g.XAdd(ctx, "bad:a", 1, "{bad:a}:s", map[string]any{}); !errors.Is(err, relock.ErrInvalidArgument) {
		t.Errorf("XAdd of no values = %v", err)
	}
	if n := rdb.Exists(ctx, "bad:a:total", "{bad:a:total}", "{bad:{b}}:total", "{bad:a}:h", "{bad:a}:s").Val(); n != 0 {
		t.Errorf("refused writes left %d keys", n)
	}
}

// TestRedisConcurrent has writers race with tokens handed out in rising
// order, shuffled within blocks of a few, as successive holders' tokens
// reach storage out of order: the value ends as the highest token wrote
// it, and the stream's entries are in token order, so no write was
// accepted after a higher token's.
func TestRedisConcurrent(t *testing.T) {
	ctx := context.Background()
	rdb := srv.Client(t)
	g := fence.NewRedis(rdb)
	res := redistest.Key(t)
	key, stream := "{"+res+"}:value", "{"+res+"}:log"
	const writers, tokens = 8, 400
	next := make(chan int64, tokens)
	for _, token := range shuffled(tokens, 2*writers) {
		next <- token
	}
	close(next)
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for range writers {
		wg.Go(func() {
			for token := range next {
				err := g.Set(ctx, res, token, key, token, 0)
				if err == nil {
					_, err = g.XAdd(ctx, res, token, stream, map[string]any{"token": token})
				}
				switch {
				case err == nil:
					mu.Lock()
					accepted++
					mu.Unlock()
				case !errors.Is(err, fence.ErrStale):
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if got := rdb.Get(ctx, key).Val(); got != strconv.Itoa(tokens) {
		t.Fatalf("value %s, want %d", got, tokens)
	}
	entries := rdb.XRange(ctx, stream, "-", "+").Val()
	prev := int64(0)
	for _, e := range entries {
		token, _ := strconv.ParseInt(e.Values["token"].(string), 10, 64)
		if token < prev {
			t.Fatalf("stream entry of token %d after one of %d", token, prev)
		}
		prev = token
	}
	if len(entries) != accepted || prev != tokens {
		t.Fatalf("%d entries up to token %d, %d accepted", len(entries), prev, accepted)
	}
	t.Logf("%d of %d writes accepted", accepted, tokens)
}

// TestRedisFencedLock: a holder whose lease ran out writes after the next
// holder, with its older token, and is refused.
func TestRedisFencedLock(t *testing.T) {
	ctx := context.Background()
	g := fence.NewRedis(srv.Client(t))
	res := redistest.Key(t)
	key := "{" + res + "}:value"
	opts := &reentrant.Options{Fencing: true, Lease: 200 * time.Millisecond}
	a := reentrant.New(redistest.Relock(t, srv.LockClient(t), nil), res, opts)
	b := reentrant.New(redistest.Relock(t, srv.LockClient(t), nil), res, opts)

	actx, err := a.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	atoken, err := a.Token(actx)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Set(ctx, res, atoken, key, "a", 0); err != nil {
		t.Fatal(err)
	}
	// a pauses; b waits out a's lease, then writes.
	bctx, err := b.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Unlock(bctx)
	btoken, err := b.Token(bctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Set(ctx, res, btoken, key, "b", 0); err != nil {
		t.Fatal(err)
	}
	wantStale(t, g.Set(ctx, res, atoken, key, "a, late", 0), atoken, btoken)
	if err := a.Unlock(actx); !errors.Is(err, relock.ErrNotHeld) {
		t.Fatalf("a's Unlock after its lease: %v", err)
	}
}
