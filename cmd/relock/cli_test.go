package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/inspect"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
)

// TestInspect shows a lock a relock client holds twice and one written
// as Redisson writes it, with who holds them, how often, and the TTL.
func TestInspect(t *testing.T) {
	bg := context.Background()
	rc := newClient(t)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	ctx, err := mu.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}
	defer mu.Unlock(ctx)
	inner, err := mu.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer mu.Unlock(inner)

	out := ok(t, "inspect", name)
	if !regexp.MustCompile(`^name +` + regexp.QuoteMeta(name) + `\nkind +lock\nttl +[0-9.]+s\n`).MatchString(out) {
		t.Fatalf("no name, kind and TTL in:\n%s", out)
	}
	holders := section(t, out, "held by:")
	if len(holders) != 1 || !regexp.MustCompile(`^  `+rc.ID()+` +\d+ +relock +2$`).MatchString(holders[0]) {
		t.Fatalf("holders %q, want client %s with 2 holds", holders, rc.ID())
	}

	raw := srv.Client(t)
	redisson := redistest.Key(t)
	id := uuid.NewString()
	raw.HSet(bg, redisson, id+":1", 1)
	raw.PExpire(bg, redisson, 30*time.Second)
	t.Cleanup(func() { raw.Del(bg, redisson) })
	holders = section(t, ok(t, "inspect", redisson), "held by:")
	if len(holders) != 1 || !regexp.MustCompile(`^  `+id+` +1 +redisson +1$`).MatchString(holders[0]) {
		t.Fatalf("holders %q, want Redisson client %s, thread 1, 1 hold", holders, id)
	}
}

// TestInspectFairQueue shows a fair lock's queue in arrival order.
func TestInspectFairQueue(t *testing.T) {
	raw := srv.Client(t)
	name := redistest.Key(t)
	holder := fair.New(newClient(t), name, nil)
	hctx, err := holder.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(hctx)
	var ids []string
	for i := range 3 {
		rc := newClient(t)
		mu := fair.New(rc, name, nil)
		waitIn(t, mu.Lock, mu.Unlock)
		locktest.WaitQueued(t, raw, name, rc.ID(), i+1)
		ids = append(ids, rc.ID())
	}
	out := ok(t, "inspect", name)
	// A fair lock's kind is a lock's: only its queue, while it has one,
	// tells it.
	if !regexp.MustCompile(`\nkind +lock\n`).MatchString(out) {
		t.Fatalf("not shown as a lock:\n%s", out)
	}
	queue := section(t, out, "fair queue:")
	if len(queue) != 3 {
		t.Fatalf("queue %q, want 3 waiters", queue)
	}
	for i, line := range queue {
		f := strings.Fields(line)
		if len(f) < 6 || f[0] != string(rune('1'+i)) || f[1] != ids[i] || f[3] != "relock" || !strings.HasPrefix(f[5], "(in") {
			t.Fatalf("queue line %d %q, want place %d of client %s with a deadline ahead", i, line, i+1, ids[i])
		}
	}
}

// TestInspectReaders shows a read/write lock's readers.
func TestInspectReaders(t *testing.T) {
	name := redistest.Key(t)
	var ids []string
	for range 2 {
		rc := newClient(t)
		rw := rwlock.New(rc, name, nil)
		ctx, err := rw.RLock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rw.RUnlock(ctx) })
		ids = append(ids, rc.ID())
	}
	out := ok(t, "inspect", name)
	if !regexp.MustCompile(`\nkind +rwlock\nmode +read\n`).MatchString(out) {
		t.Fatalf("not shown in read mode:\n%s", out)
	}
	holders := section(t, out, "held by:")
	if len(holders) != 2 {
		t.Fatalf("holders %q, want two readers", holders)
	}
	for _, id := range ids {
		if !regexp.MustCompile(`(?m)^  ` + id + ` +\d+ +relock +1 +read +[0-9.]+s$`).MatchString(strings.Join(holders, "\n")) {
			t.Fatalf("holders %q: no reader %s with one read lease", holders, id)
		}
	}
}

// TestJSON checks that -json prints what inspect.Read returns, and that
// list -json prints an array of the same.
func TestJSON(t *testing.T) {
	rc := newClient(t)
	base := redistest.Key(t)
	for _, n := range []string{"a", "b"} {
		mu := reentrant.New(rc, base+":"+n, nil)
		ctx, err := mu.Lock(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { mu.Unlock(ctx) })
	}
	var got inspect.Lock
	if err := json.Unmarshal([]byte(ok(t, "-json", "inspect", base+":a")), &got); err != nil {
		t.Fatal(err)
	}
	want, err := inspect.Read(context.Background(), srv.Client(t), base+":a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != want.Name || got.Kind != inspect.KindLock || len(got.Holders) != 1 || got.Holders[0].Ident != want.Holders[0].Ident ||
		got.Holders[0].Holds != 1 || got.TTL < want.TTL || got.ServerTime.After(want.ServerTime) {
		t.Fatalf("-json inspect = %+v, want %+v", got, want)
	}
	var list []inspect.Lock
	if err := json.Unmarshal([]byte(ok(t, "list", "-json", base+":*")), &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Name != base+":a" || list[1].Name != base+":b" || list[1].Holders[0].ClientID != rc.ID() {
		t.Fatalf("list -json = %+v, want %s:a and :b", list, base)
	}
	if out := ok(t, "list", "-json", base+":none*"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("list -json of nothing = %q, want []", out)
	}
}

// TestList lists the locks matching a pattern, and only those: not
// their companion keys, not other keys.
func TestList(t *testing.T) {
	bg := context.Background()
	raw := srv.Client(t)
	base := redistest.Key(t)
	rc := newClient(t)
	hold := func(lock func(context.Context) (context.Context, error), unlock func(context.Context) error) {
		ctx, err := lock(bg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unlock(ctx) })
	}
	m := reentrant.New(rc, base+":mutex", &reentrant.Options{Fencing: true})
	hold(m.Lock, m.Unlock)
	t.Cleanup(func() { raw.Del(bg, "redisson_lock_token:{"+base+":mutex}") })
	rw := rwlock.New(rc, base+":rw", nil)
	hold(rw.RLock, rw.RUnlock)
	raw.Set(bg, base+":string", 1, time.Minute)
	other := reentrant.New(rc, "other:"+base, nil)
	hold(other.Lock, other.Unlock)

	out := ok(t, "list", base+":*")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "NAME ") ||
		!regexp.MustCompile(`^`+regexp.QuoteMeta(base)+`:mutex +fencing +no expiry +- +0 +0$`).MatchString(lines[1]) ||
		!regexp.MustCompile(`^`+regexp.QuoteMeta(base)+`:mutex +lock +[0-9.]+s +relock \w+:\d+ x1 +0 +0$`).MatchString(lines[2]) ||
		!regexp.MustCompile(`^`+regexp.QuoteMeta(base)+`:rw +rwlock +[0-9.]+s +relock \w+:\d+ x1 \(read\) +0 +0$`).MatchString(lines[3]) ||
		!regexp.MustCompile(`^`+regexp.QuoteMeta(base)+`:string +count +[0-9.]+s +- +0 +0$`).MatchString(lines[4]) {
		t.Fatalf("list %s:* =\n%s\nwant the fencing counter, the mutex, the rwlock and the count", base, out)
	}
	// -skip-idle leaves out the count, whose use nothing shows, and
	// says so.
	r := cli(t, "", "-url", "redis://"+srv.Addr, "list", "-skip-idle", base+":*")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 4 || strings.Contains(r.stdout, ":string") ||
		r.stderr != "relock: left out 1 idle counts (-skip-idle)\n" {
		t.Fatalf("list -skip-idle %s:* = exit %d\n%s%s\nwant the fencing counter, the mutex and the rwlock, and the count counted", base, r.code, r.stdout, r.stderr)
	}
	out = ok(t, "list", "-kind", "lock,rwlock", base+":*")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 3 {
		t.Fatalf("list -kind lock,rwlock %s:* =\n%s\nwant the mutex and the rwlock", base, out)
	}
}

// TestForceUnlock force-unlocks a lock of each type that a relock client
// holds while another client's Lock waits: the lock is gone, the waiter
// gets it within a second, and the holder is told within a second (its
// lock context cancelled with ErrLockLost), not at its next renewal.
func TestForceUnlock(t *testing.T) {
	raw := srv.Client(t)
	bg := context.Background()
	for _, tc := range []struct {
		kind string
		// lockers returns the holder's and the waiter's Lock.
		lockers func(holder, waiter *relock.Client, name string) (hold, wait func(context.Context) (context.Context, error))
		// waiting reports that the waiter waits.
		waiting func(name, waiter string) bool
	}{
		{"reentrant", func(h, w *relock.Client, name string) (func(context.Context) (context.Context, error), func(context.Context) (context.Context, error)) {
			return reentrant.New(h, name, nil).Lock, reentrant.New(w, name, nil).Lock
		}, func(name, _ string) bool { return raw.ZCard(bg, "relock_lock_waiters:{"+name+"}").Val() == 1 }},
		{"fair", func(h, w *relock.Client, name string) (func(context.Context) (context.Context, error), func(context.Context) (context.Context, error)) {
			return fair.New(h, name, nil).Lock, fair.New(w, name, nil).Lock
		}, func(name, waiter string) bool {
			q := raw.LRange(bg, "redisson_lock_queue:{"+name+"}", 0, -1).Val()
			return len(q) == 1 && strings.HasPrefix(q[0], waiter+":")
		}},
		{"rwlock", func(h, w *relock.Client, name string) (func(context.Context) (context.Context, error), func(context.Context) (context.Context, error)) {
			return rwlock.New(h, name, nil).Lock, rwlock.New(w, name, nil).RLock
		}, func(name, _ string) bool {
			return raw.PubSubNumSub(bg, "redisson_rwlock:{"+name+"}").Val()["redisson_rwlock:{"+name+"}"] == 1
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			holder, waiter := newClient(t), newClient(t)
			name := redistest.Key(t)
			hold, wait := tc.lockers(holder, waiter, name)
			hctx, err := hold(bg)
			if err != nil {
				t.Fatal(err)
			}
			redistest.AwaitListening(t, raw, holder)
			acquired := make(chan time.Time, 1)
			ctx, cancel := context.WithTimeout(bg, 20*time.Second)
			var wg sync.WaitGroup
			wg.Go(func() {
				if _, err := wait(ctx); err == nil {
					acquired <- time.Now()
				}
			})
			defer wg.Wait()
			defer cancel()
			eventually(t, "the waiter waiting", func() bool { return tc.waiting(name, waiter.ID()) })

			toldAt := make(chan time.Time, 1)
			context.AfterFunc(hctx, func() { toldAt <- time.Now() })
			started := time.Now()
			out := ok(t, "force-unlock", "-yes", name)
			done := time.Now()
			if !strings.HasPrefix(out, "force-unlocked "+name+" (") || !strings.Contains(out, holder.ID()) {
				t.Fatalf("force-unlock printed %q", out)
			}
			var got time.Time
			select {
			case got = <-acquired:
				if d := got.Sub(done); d > time.Second {
					t.Fatalf("the waiter got the lock %v after force-unlock, want within 1s", d)
				}
			case <-time.After(time.Second):
				t.Fatal("the waiter did not get the lock within 1s of force-unlock")
			}
			var told time.Time
			select {
			case told = <-toldAt:
			case <-time.After(time.Second):
				t.Fatal("the holder was not told within 1s of force-unlock")
			}
			if cause := context.Cause(hctx); !errors.Is(cause, relock.ErrLockLost) || !strings.Contains(cause.Error(), "force-unlocked") {
				t.Fatalf("holder's cause %v, want ErrLockLost saying it was force-unlocked", cause)
			}
			t.Logf("command ran %v; holder told %v after it returned, %v after the waiter got the lock (negative: before)",
				done.Sub(started), told.Sub(done), told.Sub(got))
			l, err := inspect.Read(bg, raw, name)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Holders) != 1 || l.Holders[0].ClientID != waiter.ID() {
				t.Fatalf("after force-unlock: holders %+v, want the waiter", l.Holders)
			}
		})
	}
}

// TestForceUnlockDeclined answers no, or nothing, to the confirmation:
// the lock stays as it was.
func TestForceUnlockDeclined(t *testing.T) {
	rc := newClient(t)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer mu.Unlock(ctx)
	for _, answer := range []string{"n\n", "", "yes please\n"} {
		r := cli(t, answer, "-url", "redis://"+srv.Addr, "force-unlock", name)
		prompt, reason, _ := strings.Cut(r.stderr, "\n")
		if !strings.Contains(prompt, "Force-unlock "+`"`+name+`"`) || !strings.Contains(prompt, rc.ID()) {
			t.Fatalf("answer %q: prompt %q, want the lock and its holder", answer, prompt)
		}
		fails(t, result{stderr: reason, code: r.code}, 1, "not confirmed: nothing changed")
		if held, err := mu.IsHeld(ctx); err != nil || !held {
			t.Fatalf("answer %q: lock held %v (%v), want still held", answer, held, err)
		}
	}
	if r := cli(t, "y\n", "-url", "redis://"+srv.Addr, "force-unlock", name); r.code != 0 {
		t.Fatalf("answer y: exit %d, %q", r.code, r.stderr)
	}
	// The holder's ctx is cancelled by now, or soon: ask with another.
	if locked, err := mu.IsLocked(context.Background()); err != nil || locked {
		t.Fatalf("after answer y: locked %v (%v), want free", locked, err)
	}
}

// TestWatch draws a lock's state at least once within -for, then again
// on each change: a release is seen through its message, before the
// next -interval read.
func TestWatch(t *testing.T) {
	rc := newClient(t)
	name := redistest.Key(t)
	mu := reentrant.New(rc, name, nil)
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := ok(t, "watch", "-for", "500ms", name)
	if !strings.HasPrefix(out, "--- "+name+" at ") || !strings.Contains(out, rc.ID()) {
		t.Fatalf("watch -for 500ms printed %q", out)
	}

	// Released while watched: the release's message brings the second
	// drawing, where the -interval read would come only after an hour.
	cmd := exec.Command(bin, "-url", "redis://"+srv.Addr, "watch", "-json", "-count", "2", "-interval", "1h", "-for", "20s", name)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var first, second inspect.Lock
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &first) != nil || first.Kind != inspect.KindLock {
		t.Fatalf("watch's first drawing %q, want the held lock", lines.Text())
	}
	released := time.Now()
	if err := mu.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() || json.Unmarshal(lines.Bytes(), &second) != nil || second.Kind != inspect.KindNone {
		t.Fatalf("watch's second drawing %q, want the lock free", lines.Text())
	}
	if err := cmd.Wait(); err != nil || time.Since(released) > 10*time.Second {
		t.Fatalf("watch -count 2 ended with %v %v after the release", err, time.Since(released))
	}
}

// TestErrors checks that bad usage and failures are one line on stderr
// and a non-zero exit: 2 for usage, 1 for a failure.
func TestErrors(t *testing.T) {
	redistest.Parallel(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	url := "redis://" + srv.Addr
	var wg sync.WaitGroup
	running := make(chan struct{}, 4)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-url", "http://" + srv.Addr, "inspect", "x"}, 2, "bad -url"},
		{[]string{"-url", "redis://" + srv.Addr + "/x", "inspect", "x"}, 2, "bad -url"},
		{[]string{"-url", "redis://" + closed, "inspect", "x"}, 1, "cannot reach Redis at " + closed},
		{[]string{"-cluster", closed, "list"}, 1, "cannot reach Redis at cluster " + closed},
		{[]string{"-url", url, "inspect", "no-such-lock"}, 3, `nothing named "no-such-lock" in Redis (see relock list`},
		{[]string{"-url", url, "force-unlock", "-yes", "no-such-lock"}, 3, `nothing named "no-such-lock"`},
		{[]string{"-url", url, "watch", "-count", "2", "-interval", "50ms", "no-such-lock"}, 3, `nothing named "no-such-lock"`},
		{[]string{"-url", url, "inspect", "a{"}, 2, "invalid lock name"},
		{[]string{"-url", url, "list", "-kind", "mutex"}, 2, `unknown kind "mutex"`},
		{[]string{"-url", url, "list", "["}, 2, "pattern"},
		{[]string{"-url", url, "-cert", "x.crt", "list"}, 2, "-cert and -key go together"},
		{[]string{"-url", url, "-cacert", "/no/such/file", "list"}, 2, "-cacert"},
		{[]string{"-url", url, "doctor", "-old", "0s"}, 2, "-old and -lease must be positive"},
		{[]string{"-url", url, "doctor", "extra"}, 2, "usage: relock doctor"},
		{[]string{"-url", url, "frobnicate"}, 2, `unknown command "frobnicate"`},
		{[]string{"-url", url}, 2, "no command given"},
		{[]string{"-url", url, "inspect"}, 2, "usage: relock inspect"},
		{[]string{"-url", url, "list", "a", "b"}, 2, "usage: relock list"},
		{[]string{"-url", url, "list", "-kind", "semaphore"}, 2, "-kind semaphore: a semaphore's, an expirable semaphore's and a latch's record is a count"},
		{[]string{"-url", url, "inspect", "-codec", "json", "x"}, 2, `-codec "json": give kryo5 or string`},
		{[]string{"-url", url, "inspect", "-bogus", "x"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"-url", url, "-cluster", srv.Addr, "list"}, 2, "only one of"},
		{[]string{"-sentinel", srv.Addr, "list"}, 2, "-sentinel and -master go together"},
		{[]string{"-url", url, "watch", "-interval", "0s", "x"}, 2, "-interval must be positive"},
		{[]string{"help", "frobnicate"}, 2, `unknown command "frobnicate"`},
	} {
		// Four processes at a time: each case is a start of the command,
		// and t.Parallel's limit (GOMAXPROCS) would run two.
		wg.Go(func() {
			running <- struct{}{}
			defer func() { <-running }()
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) { fails(t, cli(t, "", tc.args...), tc.code, tc.want) })
		})
	}
	wg.Wait()
}

// TestHelp checks that -h and help document every command and flag.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"-h"}, {"help"}, {"-url", "redis://x", "-h"}} {
		r := cli(t, "", args...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("relock %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		for _, want := range []string{
			"inspect NAME [VALUE...]", "list [PATTERN]", "watch NAME", "force-unlock NAME [PERMIT-ID | VALUE...]", "doctor", "help [COMMAND]",
			"-url host:port", "REDIS_URL", "-tls", "-cacert file", "-cert file", "-key file", "-insecure",
			"-kind kinds", "-skip-idle", "-old duration", "-lease duration", "-state file",
			"  3  not found", "  4  doctor found problems", "-sentinel addresses", "-master name", "-cluster addresses", "-user user",
			"-password password", "-timeout duration", "-json", "-limit N", "-count N", "-for duration",
			"-interval duration", "-yes", "-codec codec", "Exit status",
			"at most one of -url, -sentinel and\n-cluster; with none, $REDIS_URL, else redis://localhost:6379",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Fatalf("relock %v lacks %q:\n%s", args, want, r.stdout)
			}
		}
	}
	for _, args := range [][]string{{"help", "force-unlock"}, {"force-unlock", "-h"}} {
		r := cli(t, "", args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: relock force-unlock [flags] NAME") || !strings.Contains(r.stdout, "-yes") {
			t.Fatalf("relock %v: exit %d, stdout %q", args, r.code, r.stdout)
		}
	}
}

// waitIn runs lock in a goroutine with a fresh owner until it acquires
// (then unlocks with unlock) or t ends, which cancels it and waits.
func waitIn(t testing.TB, lock func(context.Context) (context.Context, error), unlock func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if lctx, err := lock(relock.WithNewOwner(ctx)); err == nil {
			_ = unlock(lctx)
		}
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// TestAuth connects as an ACL user given in the URL, and with -user and
// -password; a wrong or missing password is an authentication failure.
func TestAuth(t *testing.T) {
	srv.RequireReal(t) // ACL users
	bg := context.Background()
	raw := srv.Client(t)
	if err := raw.Do(bg, "ACL", "SETUSER", "relock-operator", "on", ">operator-pw", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Do(bg, "ACL", "DELUSER", "relock-operator") })
	name := redistest.Key(t)
	raw.HSet(bg, name, uuid.NewString()+":1", 1)
	t.Cleanup(func() { raw.Del(bg, name) })
	for _, conn := range [][]string{
		{"-url", "redis://relock-operator:operator-pw@" + srv.Addr},
		{"-url", "redis://" + srv.Addr, "-user", "relock-operator", "-password", "operator-pw"},
		{"-url", "redis://relock-operator:wrong@" + srv.Addr, "-password", "operator-pw"},
	} {
		if r := cli(t, "", append(conn, "inspect", name)...); r.code != 0 || !strings.Contains(r.stdout, "redisson") {
			t.Fatalf("relock %v: exit %d, %q %q", conn, r.code, r.stdout, r.stderr)
		}
	}
	// A refused login is reported as such, not as a server out of reach.
	for _, conn := range [][]string{
		{"-url", "redis://relock-operator:wrong@" + srv.Addr},
		{"-url", "redis://" + srv.Addr, "-user", "relock-operator", "-password", "nope"},
	} {
		r := cli(t, "", append(conn, "inspect", name)...)
		fails(t, r, 1, "authentication to Redis at "+srv.Addr+" failed: WRONGPASS")
		if strings.Contains(r.stderr, "cannot reach") {
			t.Fatalf("relock %v: %q", conn, r.stderr)
		}
	}
	// The refusal is in the ACL LOG, which TestMain checks for what
	// relock's own user was refused.
	raw.Do(bg, "ACL", "LOG", "RESET")
}
