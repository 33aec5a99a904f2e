package reorder_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/internal/testing/reorder"
)

// setup starts a redis-server and a proxy to it applying rule, both
// stopped when t ends.
func setup(t *testing.T, rule reorder.Rule) (*redistest.Server, *reorder.Proxy) {
	t.Helper()
	srv := redistest.Start(t)
	srv.RequireReal(t)
	p, err := reorder.Start(srv.Addr, rule)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return srv, p
}

// through returns a client of srv that connects through p, closed when
// t ends: one connection, no retries, and deadlines on the socket
// (ContextTimeoutEnabled), as relock's explorers run them.
func through(t *testing.T, srv *redistest.Server, p *reorder.Proxy) *redis.Client {
	t.Helper()
	o := srv.Options()
	o.Addr = p.Addr()
	o.PoolSize = 1
	o.MaxRetries, o.ContextTimeoutEnabled = -1, true
	c := redis.NewClient(o)
	t.Cleanup(func() { c.Close() })
	return c
}

// holdSet returns a rule that holds SET key value for hold and closes
// seen when it sees that command (the first time).
func holdSet(key, value string, hold time.Duration, seen chan struct{}) reorder.Rule {
	var once sync.Once
	return func(c reorder.Cmd) reorder.Action {
		if c.Name() == "set" && len(c.Args) >= 3 && c.Args[1] == key && c.Args[2] == value {
			once.Do(func() { close(seen) })
			return reorder.Action{Hold: hold}
		}
		return reorder.Action{}
	}
}

// wait waits for ch, or fails t after a second.
func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Second):
		t.Fatalf("no %s after 1s", what)
	}
}

// get returns key's value on srv, read directly.
func get(t *testing.T, srv *redistest.Server, key string) string {
	t.Helper()
	v, err := srv.Client(t).Get(context.Background(), key).Result()
	if err != nil {
		t.Fatalf("GET %s: %v", key, err)
	}
	return v
}

// quiet waits for p to be quiet, or fails t after 2s.
func quiet(t *testing.T, p *reorder.Proxy) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.Quiet(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPassThrough runs go-redis's commands, RESP3 replies of every kind
// and a pub/sub round trip through a proxy whose rule forwards
// everything, and checks what the rule saw.
func TestPassThrough(t *testing.T) {
	var mu sync.Mutex
	var seen []reorder.Cmd
	srv, p := setup(t, func(c reorder.Cmd) reorder.Action {
		mu.Lock()
		seen = append(seen, c)
		mu.Unlock()
		return reorder.Action{}
	})
	rdb := through(t, srv, p)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	key := redistest.Key(t)

	if err := rdb.Set(ctx, key, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := rdb.Get(ctx, key).Result(); err != nil || v != "v" {
		t.Fatalf("GET = %q, %v; want v", v, err)
	}
	if err := rdb.Get(ctx, key+":missing").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET of a missing key: %v; want redis.Nil", err)
	}

	var hash *redis.MapStringStringCmd
	var members *redis.StringSliceCmd
	var score *redis.FloatCmd
	var incr *redis.IntCmd
	_, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		incr = pipe.Incr(ctx, key+":n")
		pipe.HSet(ctx, key+":h", "f", "1")
		hash = pipe.HGetAll(ctx, key+":h") // a RESP3 map
		pipe.SAdd(ctx, key+":s", "a", "b")
		members = pipe.SMembers(ctx, key+":s") // a RESP3 set
		pipe.ZAdd(ctx, key+":z", redis.Z{Score: 1.5, Member: "m"})
		score = pipe.ZScore(ctx, key+":z", "m") // a RESP3 double
		return nil
	})
	if err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	if incr.Val() != 1 || hash.Val()["f"] != "1" || len(members.Val()) != 2 || score.Val() != 1.5 {
		t.Fatalf("pipeline got %d, %v, %v, %v", incr.Val(), hash.Val(), members.Val(), score.Val())
	}

	script := redis.NewScript(`return {redis.call('GET', KEYS[1]), ARGV[1]}`)
	v, err := script.Run(ctx, rdb, []string{key}, "arg").StringSlice()
	if err != nil || !slices.Equal(v, []string{"v", "arg"}) {
		t.Fatalf("script = %q, %v; want [v arg]", v, err)
	}

	sub := rdb.Subscribe(ctx, key)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	// The subscription's confirmation, a RESP3 push, answered SUBSCRIBE.
	quiet(t, p)
	pub := through(t, srv, p)
	if n, err := pub.Publish(ctx, key, "hi").Result(); err != nil || n != 1 {
		t.Fatalf("PUBLISH = %d, %v; want 1 receiver", n, err)
	}
	msg, err := sub.ReceiveMessage(ctx)
	if err != nil || msg.Payload != "hi" {
		t.Fatalf("message = %v, %v; want hi", msg, err)
	}

	mu.Lock()
	defer mu.Unlock()
	names := map[string]bool{}
	for i, c := range seen {
		if c.Seq != i+1 || c.Conn < 1 {
			t.Fatalf("command %d is %+v: want Seq %d and Conn from 1", i, c, i+1)
		}
		names[c.Name()] = true
	}
	for _, n := range []string{"hello", "set", "get", "hgetall", "evalsha", "subscribe", "publish"} {
		if !names[n] {
			t.Errorf("the rule did not see %s; it saw %v", n, names)
		}
	}
}

// TestHoldReorders holds SET x 1 of one client while another sends SET
// x 2 after it: the server runs the later command first.
func TestHoldReorders(t *testing.T) {
	key := redistest.Key(t)
	seen := make(chan struct{})
	srv, p := setup(t, holdSet(key, "1", 200*time.Millisecond, seen))
	a, b := through(t, srv, p), through(t, srv, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- a.Set(ctx, key, "1", 0).Err() }()
	wait(t, seen, "SET 1 at the proxy")
	if err := b.Set(ctx, key, "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("SET 1 returned (%v) before its hold ended", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v := get(t, srv, key); v != "1" {
		t.Fatalf("%s = %q; want 1, the held SET run last", key, v)
	}
}

// TestHoldOutlivesClient holds a SET whose caller gives up at its
// deadline, which closes its connection: the server still runs the SET,
// after a SET sent later on another connection.
func TestHoldOutlivesClient(t *testing.T) {
	key := redistest.Key(t)
	seen := make(chan struct{})
	const hold = 150 * time.Millisecond
	srv, p := setup(t, holdSet(key, "1", hold, seen))
	a, b := through(t, srv, p), through(t, srv, p)
	bg, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// Connect first, so that the deadline bounds the SET alone.
	if err := a.Ping(bg).Err(); err != nil {
		t.Fatal(err)
	}

	ctx, stop := context.WithTimeout(bg, 20*time.Millisecond)
	defer stop()
	start := time.Now()
	err := a.Set(ctx, key, "1", 0).Err()
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("SET with a 20ms deadline: %v; want a deadline error", err)
	}
	if took := time.Since(start); took >= hold {
		t.Fatalf("SET returned after %v, not at its deadline", took)
	}
	wait(t, seen, "SET 1 at the proxy")
	if err := b.Set(bg, key, "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v := get(t, srv, key); v != "2" {
		t.Fatalf("%s = %q before the hold ended; want 2", key, v)
	}
	quiet(t, p)
	if v := get(t, srv, key); v != "1" {
		t.Fatalf("%s = %q; want 1, the abandoned SET run last", key, v)
	}
}

// TestDropReply drops the reply to a SET: the caller gets an error, the
// key is written, and the client's next command works on a new
// connection.
func TestDropReply(t *testing.T) {
	key := redistest.Key(t)
	srv, p := setup(t, func(c reorder.Cmd) reorder.Action {
		return reorder.Action{DropReply: c.Name() == "set" && c.Args[1] == key}
	})
	a := through(t, srv, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	err := a.Set(ctx, key, "1", 0).Err()
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SET with its reply dropped: %v; want a connection error", err)
	}
	if v := get(t, srv, key); v != "1" {
		t.Fatalf("%s = %q; want 1, the SET run", key, v)
	}
	if v, err := a.Get(ctx, key).Result(); err != nil || v != "1" {
		t.Fatalf("GET after the drop = %q, %v; want 1", v, err)
	}
	quiet(t, p)
}

// TestRelease ends a long hold early; Quiet reports the held command
// until then, and Close returns at once with a command held.
func TestRelease(t *testing.T) {
	key := redistest.Key(t)
	seen := make(chan struct{})
	srv, p := setup(t, holdSet(key, "1", time.Minute, seen))
	a := through(t, srv, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- a.Set(ctx, key, "1", 0).Err() }()
	wait(t, seen, "SET 1 at the proxy")
	short, stop := context.WithTimeout(ctx, 50*time.Millisecond)
	defer stop()
	if err := p.Quiet(short); err == nil {
		t.Fatal("Quiet returned nil with a command held")
	}
	p.Release()
	if err := <-done; err != nil {
		t.Fatalf("SET after Release: %v", err)
	}
	quiet(t, p)
	if v := get(t, srv, key); v != "1" {
		t.Fatalf("%s = %q; want 1", key, v)
	}

	again := make(chan struct{})
	p.SetRule(holdSet(key, "2", time.Minute, again))
	go func() { done <- a.Set(ctx, key, "2", 0).Err() }()
	wait(t, again, "SET 2 at the proxy")
	start := time.Now()
	p.Close()
	if took := time.Since(start); took > time.Second {
		t.Fatalf("Close took %v with a command held", took)
	}
	if err := <-done; err == nil {
		t.Fatal("SET held across Close succeeded")
	}
}

// TestSeeded checks that Seeded rules of one seed agree, that another
// seed differs, and that the Actions keep to match, the probabilities
// and maxHold.
func TestSeeded(t *testing.T) {
	cmds := make([]reorder.Cmd, 400)
	for i := range cmds {
		name := []string{"EVALSHA", "GET", "evalsha", "SET"}[i%4]
		cmds[i] = reorder.Cmd{Conn: 1 + i%3, Seq: i + 1, Args: []string{name, "k"}}
	}
	isEval := func(c reorder.Cmd) bool { return c.Name() == "evalsha" }
	const maxHold = 50 * time.Millisecond
	run := func(r reorder.Rule) []reorder.Action {
		out := make([]reorder.Action, len(cmds))
		for i, c := range cmds {
			out[i] = r(c)
		}
		return out
	}
	a := run(reorder.Seeded(7, isEval, 0.5, 0.3, maxHold))
	if b := run(reorder.Seeded(7, isEval, 0.5, 0.3, maxHold)); !slices.Equal(a, b) {
		t.Fatal("two rules of seed 7 differ")
	}
	if c := run(reorder.Seeded(8, isEval, 0.5, 0.3, maxHold)); slices.Equal(a, c) {
		t.Fatal("seeds 7 and 8 give the same actions")
	}
	var held, dropped int
	for i, act := range a {
		switch {
		case !isEval(cmds[i]) && act != reorder.Action{}:
			t.Fatalf("%v, not matched, got %+v", cmds[i].Args, act)
		case act.Hold < 0 || act.Hold > maxHold:
			t.Fatalf("hold %v out of [0, %v]", act.Hold, maxHold)
		}
		if act.Hold > 0 {
			held++
		}
		if act.DropReply {
			dropped++
		}
	}
	// 200 matched commands: about 100 held and 60 dropped.
	if held < 60 || held > 140 || dropped < 30 || dropped > 90 {
		t.Fatalf("%d held and %d dropped of 200; want about 100 and 60", held, dropped)
	}
	for _, act := range run(reorder.Seeded(7, nil, 0, 0, maxHold)) {
		if act != (reorder.Action{}) {
			t.Fatalf("pHold and pDrop 0 gave %+v", act)
		}
	}
}

// TestStartRejectsRemoteTarget checks that the proxy forwards only to
// loopback.
func TestStartRejectsRemoteTarget(t *testing.T) {
	for _, target := range []string{"10.0.0.1:6379", "example.com:6379", "6379"} {
		if p, err := reorder.Start(target, nil); err == nil {
			p.Close()
			t.Errorf("Start(%q) succeeded; want an error", target)
		}
	}
}
