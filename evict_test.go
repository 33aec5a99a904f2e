package relock_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// evictionLogs returns the records of h that say whether Redis may evict
// lock keys.
func (h *logRecorder) evictionLogs() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var found []slog.Record
	for _, r := range h.records {
		if strings.Contains(r.Message, "evict") {
			found = append(found, r)
		}
	}
	return found
}

// lockTwice locks and unlocks two names through rc, twice each.
func lockTwice(t *testing.T, rc *relock.Client) {
	t.Helper()
	for range 2 {
		for _, name := range []string{redistest.Key(t), redistest.Key(t)} {
			mu := reentrant.New(rc, name, nil)
			redistest.Unlock(t, mu, redistest.Lock(t, mu, context.Background()))
		}
	}
}

// TestEvictionTold: a client of a master with a maxmemory and
// volatile-lru logs one warning naming the policy and the fix, and tells
// its Observer once, with replica sync on SyncAuto (the policy read with
// the replicas) and off (read on its own); a master with noeviction, or
// miniredis, which has no INFO memory, is not mentioned.
func TestEvictionTold(t *testing.T) {
	redistest.Parallel(t)
	t.Run("volatile-lru", func(t *testing.T) {
		srv := redistest.Start(t, "--maxmemory", "100mb", "--maxmemory-policy", "volatile-lru")
		srv.RequireReal(t)
		for _, mode := range []struct {
			name string
			sync int
		}{{"SyncAuto", relock.SyncAuto}, {"SyncOff", relock.SyncOff}} {
			t.Run(mode.name, func(t *testing.T) {
				log, rec := &logRecorder{}, &recorder{}
				rc := redistest.Relock(t, srv.LockClient(t), &relock.Options{Logger: slog.New(log), Observer: rec, SyncReplicas: mode.sync})
				lockTwice(t, rc)
				// With replica sync off the check runs in the background.
				redistest.Eventually(t, 5*time.Second, "the warning", func() bool { return len(log.evictionLogs()) > 0 })
				lockTwice(t, rc)
				logs := log.evictionLogs()
				if len(logs) != 1 {
					t.Fatalf("%d eviction records logged, want 1: %v", len(logs), logs)
				}
				if r := logs[0]; r.Level != slog.LevelWarn || !strings.Contains(r.Message, "noeviction") || !strings.Contains(r.Message, "second holder") {
					t.Errorf("logged %v %q, want a warning naming the risk and the fix", r.Level, r.Message)
				}
				attrs := map[string]string{}
				logs[0].Attrs(func(a slog.Attr) bool { attrs[a.Key] = a.Value.String(); return true })
				if attrs["maxmemory-policy"] != "volatile-lru" || attrs["maxmemory"] != "100.00M" {
					t.Errorf("logged attributes %v, want maxmemory-policy volatile-lru, maxmemory 100.00M", attrs)
				}
				evicts := rec.snapshot().evicts
				if len(evicts) != 1 {
					t.Fatalf("Observer told %d times, want once: %+v", len(evicts), evicts)
				}
				if e := evicts[0]; e.Policy != "volatile-lru" || e.MaxMemory != 100<<20 || e.Addr != "" || e.Err != nil {
					t.Errorf("Observer told %+v", e)
				}
			})
		}
	})
	t.Run("noeviction", func(t *testing.T) {
		srv := redistest.Start(t, "--maxmemory", "100mb", "--maxmemory-policy", "noeviction")
		if !srv.Real() {
			t.Log("on miniredis, which does not answer INFO memory")
		}
		for _, sync := range []int{relock.SyncAuto, relock.SyncOff} {
			log, rec := &logRecorder{}, &recorder{}
			rc := redistest.Relock(t, srv.LockClient(t), &relock.Options{Logger: slog.New(log), Observer: rec, SyncReplicas: sync})
			lockTwice(t, rc)
			// Close waits for the background check of SyncOff.
			if err := rc.Close(); err != nil {
				t.Fatal(err)
			}
			if logs := log.evictionLogs(); len(logs) != 0 {
				t.Errorf("SyncReplicas %d: logged %v", sync, logs)
			}
			if evicts := rec.snapshot().evicts; len(evicts) != 0 {
				t.Errorf("SyncReplicas %d: Observer told %+v", sync, evicts)
			}
		}
	})
}

// TestEvictionUnchecked: a client whose ACL user may not run INFO (with
// replica sync off, which needs none) says once that it could not check,
// and its locks work.
func TestEvictionUnchecked(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t)
	srv.RequireReal(t)
	admin := srv.Client(t)
	bg := context.Background()
	const user, password = "noinfo", "noinfo-password"
	if err := admin.Do(bg, "ACL", "SETUSER", user, "on", ">"+password, "~*", "&*", "+@all", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	// The server's cleanup fails the test on denied commands: these
	// are the test's own.
	t.Cleanup(func() { _ = admin.Do(context.Background(), "ACL", "LOG", "RESET").Err() })
	o := srv.Options()
	o.Username, o.Password = user, password
	rdb := redis.NewClient(o)
	t.Cleanup(func() { rdb.Close() })
	log, rec := &logRecorder{}, &recorder{}
	rc := redistest.Relock(t, rdb, &relock.Options{Logger: slog.New(log), Observer: rec, SyncReplicas: relock.SyncOff})
	lockTwice(t, rc)
	redistest.Eventually(t, 5*time.Second, "the note", func() bool { return len(log.evictionLogs()) > 0 })
	lockTwice(t, rc)
	logs := log.evictionLogs()
	if len(logs) != 1 || !strings.Contains(logs[0].Message, "could not check") {
		t.Fatalf("logged %v, want one record saying it could not check", logs)
	}
	evicts := rec.snapshot().evicts
	if len(evicts) != 1 || evicts[0].Err == nil || !strings.Contains(evicts[0].Err.Error(), "NOPERM") {
		t.Fatalf("Observer told %+v, want once, with the refusal", evicts)
	}
}

// TestEvictedLockLost: a master that evicts (volatile-ttl, which picks
// the key nearest its expiry: a lock's, against fillers that last an
// hour) evicts a held lock once memory fills; a second client then takes
// the lock, and the holder's context ends with ErrLockLost within one
// renewal interval (a third of WatchdogTimeout) of the eviction, plus a
// margin for a loaded machine.
func TestEvictedLockLost(t *testing.T) {
	redistest.Parallel(t)
	srv := redistest.Start(t, "--maxmemory-policy", "volatile-ttl")
	srv.RequireReal(t)
	admin := srv.Client(t)
	bg := context.Background()
	const lease = 3 * time.Second
	quiet := slog.New(slog.DiscardHandler)
	name := redistest.Key(t)
	holder := reentrant.New(redistest.Relock(t, srv.LockClient(t), &relock.Options{WatchdogTimeout: lease, Logger: quiet}), name, nil)
	lctx := redistest.Lock(t, holder, bg)

	info, err := admin.Info(bg, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	used, err := strconv.ParseInt(infoValue(info, "used_memory"), 10, 64)
	if err != nil {
		t.Fatalf("used_memory in %q: %v", info, err)
	}
	if err := admin.ConfigSet(bg, "maxmemory", strconv.FormatInt(used+2<<20, 10)).Err(); err != nil {
		t.Fatal(err)
	}
	filler := strings.Repeat("x", 64<<10)
	var evicted time.Time
	for i := 0; i < 1000 && evicted.IsZero(); i++ {
		if err := admin.Set(bg, fmt.Sprintf("%s:filler:%d", name, i), filler, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		n, err := admin.Exists(bg, name).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			evicted = time.Now()
		}
	}
	if evicted.IsZero() {
		t.Fatal("the lock was not evicted after 1000 fillers of 64 KiB")
	}
	// Memory stays full: lift the limit, or the next key nearest its
	// expiry, the second client's lock, would go too.
	if err := admin.ConfigSet(bg, "maxmemory", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if lctx.Err() != nil {
		t.Logf("the holder was told %v before the test saw the eviction", context.Cause(lctx))
	}

	other := reentrant.New(redistest.Relock(t, srv.LockClient(t), &relock.Options{WatchdogTimeout: lease, Logger: quiet}), name, nil)
	octx, err := other.TryLock(bg, 0)
	if err != nil {
		t.Fatalf("a second client's TryLock after the eviction = %v, want the lock", err)
	}
	defer redistest.Unlock(t, other, octx)

	bound := lease/3 + time.Second
	select {
	case <-lctx.Done():
		t.Logf("the holder's context ended %v after the eviction was seen", time.Since(evicted).Round(time.Millisecond))
	case <-time.After(bound):
		t.Fatalf("the holder's context did not end within %v of the eviction", bound)
	}
	if cause := context.Cause(lctx); !errors.Is(cause, relock.ErrLockLost) {
		t.Fatalf("the holder's context ended with %v, want ErrLockLost", cause)
	}
}

// infoValue is field's value in INFO's text.
func infoValue(text, field string) string {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}
