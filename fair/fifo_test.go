package fair_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/internal/testing/locktest"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// queueKeys returns the queue list and timeout set of lock name.
func queueKeys(name string) (queue, timeouts string) {
	keys := locktest.FairResidue(name)
	return keys[0], keys[1]
}

// TestOnlyHeadWoken: each unlock hands the lock to the queue head
// directly: it publishes one message, "<owner>:<lease ms>" on the head's
// client's channel, and no waiter runs an acquire script after its first
// ones (taking its place in the queue).
func TestOnlyHeadWoken(t *testing.T) {
	redistest.Parallel(t)
	raw := srv.Client(t)
	bg := context.Background()
	name := redistest.Key(t)
	sub := raw.PSubscribe(bg, "redisson_lock__channel:{"+name+"}:*")
	defer sub.Close()
	if _, err := sub.Receive(bg); err != nil {
		t.Fatal(err)
	}
	holder := fair.New(newClient(t, nil), name, nil)
	hctx, err := holder.Lock(bg)
	if err != nil {
		t.Fatal(err)
	}

	const waiters = 5
	counts := make([]*redistest.ScriptCounter, waiters)
	acquired := make([]chan context.Context, waiters)
	muts := make([]*fair.Mutex, waiters)
	fields := make([]string, waiters)
	for i := range waiters {
		counts[i] = &redistest.ScriptCounter{}
		rc := srv.Counted(t, counts[i])
		muts[i] = fair.New(rc, name, nil)
		acquired[i] = make(chan context.Context, 1)
		go func() {
			ctx, err := muts[i].Lock(bg)
			if err != nil {
				t.Error(err)
			}
			acquired[i] <- ctx
		}()
		fields[i] = locktest.WaitQueued(t, raw, name, rc.ID(), i+1)
	}
	time.Sleep(50 * time.Millisecond) // let each waiter's retry after subscribing land

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
		case <-time.After(5 * time.Second):
			t.Fatalf("waiter %d (the head) not woken", i)
		}
		for j := i; j < waiters; j++ {
			if d := counts[j].N() - before[j]; d != 0 {
				t.Fatalf("unlock %d: waiter %d ran %d acquire scripts, want none", i, j, d)
			}
		}
		rctx, cancel := context.WithTimeout(bg, 2*time.Second)
		msg, err := sub.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			t.Fatalf("unlock %d: no release message: %v", i, err)
		}
		at := strings.LastIndexByte(fields[i], ':')
		want, payload := "redisson_lock__channel:{"+name+"}:"+fields[i][:at], fields[i][at+1:]+":30000"
		if msg.Channel != want || msg.Payload != payload {
			t.Fatalf("unlock %d: message %q on %s, want %q on %s", i, msg.Payload, msg.Channel, payload, want)
		}
		m := muts[i]
		release = func() error { return m.Unlock(ctx) }
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	// The last unlock had nobody to wake.
	rctx, cancel := context.WithTimeout(bg, 200*time.Millisecond)
	defer cancel()
	if msg, err := sub.ReceiveMessage(rctx); err == nil {
		t.Fatalf("message %q on %s with nobody queued", msg.Payload, msg.Channel)
	}
}
