package semaphore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/semaphore"
)

// replicated starts a master and one replica of it, both the test's own,
// and waits until a write on the master is confirmed by the replica.
func replicated(t *testing.T) (master, replica *redistest.Server) {
	t.Helper()
	master = redistest.Start(t, "--repl-diskless-sync-delay", "0")
	master.RequireReal(t)
	_, port, _ := strings.Cut(master.Addr, ":")
	replica = redistest.Start(t, "--replicaof", "127.0.0.1", port)
	raw := master.Client(t)
	bg := context.Background()
	redistest.Eventually(t, 10*time.Second, "replica in sync", func() bool {
		return raw.Set(bg, "replicated", "1", 0).Err() == nil && raw.Do(bg, "WAIT", 1, 100).Val() == int64(1)
	})
	raw.Del(bg, "replicated")
	return master, replica
}

// TestSyncReplicas: with default options an acquire returns once the
// master's replica has the decrement; when the replica cannot confirm
// it, the permits are given back (and published) and the acquire fails
// with ErrNotAcquired, as Redisson's tryAcquire does.
func TestSyncReplicas(t *testing.T) {
	master, replica := replicated(t)
	bg := context.Background()
	name := redistest.Key(t)
	mraw, rraw := master.Client(t), replica.Client(t)
	rc := redistest.Relock(t, master.LockClient(t), &relock.Options{SyncTimeout: 300 * time.Millisecond})
	s := semaphore.New(rc, name, nil)
	if ok, err := s.TrySetPermits(bg, 3); err != nil || !ok {
		t.Fatalf("TrySetPermits = %v, %v", ok, err)
	}
	if err := s.Acquire(bg, 1); err != nil {
		t.Fatal(err)
	}
	if v := rraw.Get(bg, name).Val(); v != "2" {
		t.Fatalf("replica's count right after Acquire = %q, want 2", v)
	}

	l := listen(t, mraw, channelOf(name))
	if err := replica.Pause(); err != nil {
		t.Fatal(err)
	}
	defer replica.Resume()
	err := s.TryAcquire(bg, 2, 0)
	if !errors.Is(err, relock.ErrNotAcquired) || !strings.Contains(err.Error(), "replicas") {
		t.Fatalf("TryAcquire with the replica frozen = %v, want ErrNotAcquired (replicas)", err)
	}
	if v := mraw.Get(bg, name).Val(); v != "2" {
		t.Fatalf("master's count after the unconfirmed acquire = %q, want 2 (given back)", v)
	}
	l.expect("giving back the unconfirmed permits", "2")
}
