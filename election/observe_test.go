package election_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestObserve: 100 observers on 10 Clients get every change of leader
// and value, in order, even changes made back to back, through one
// subscription per Client, and no Redis command is sent while nothing
// changes.
func TestObserve(t *testing.T) {
	srv.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	const clients, perClient = 10, 10
	ctx, cancel := context.WithCancel(bg)
	defer cancel()

	var (
		mu   sync.Mutex // guards seen
		seen = make([][]election.Leader, clients*perClient)
		wg   sync.WaitGroup
	)
	for c := range clients {
		rc := newClient(t, nil)
		for o := range perClient {
			ch, err := election.New(rc, name, nil).Observe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			i := c*perClient + o
			wg.Add(1)
			go func() {
				defer wg.Done()
				for l := range ch {
					mu.Lock()
					seen[i] = append(seen[i], l)
					mu.Unlock()
				}
			}()
		}
	}
	defer wg.Wait()
	defer cancel()
	raw := srv.Client(t)
	channel := "relock_election_channel:{" + name + "}"
	if n := raw.PubSubNumSub(bg, channel).Val()[channel]; n != clients {
		t.Fatalf("%d subscriptions to %s, want one per Client (%d)", n, channel, clients)
	}
	// allSeen waits until every observer's last leader is want.
	allSeen := func(want election.Leader) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			mu.Lock()
			done := 0
			for _, s := range seen {
				if len(s) > 0 && s[len(s)-1] == want {
					done++
				}
			}
			mu.Unlock()
			if done == len(seen) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d observers saw %+v", done, len(seen), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	a := election.New(newClient(t, nil), name, nil)
	b := election.New(newClient(t, nil), name, nil)
	actx := campaignT(t, a, bg, "a")
	ta := termT(t, actx)
	want := []election.Leader{{Value: "a", Term: ta}}
	allSeen(want[len(want)-1])

	// Nothing changes: no command, from any client.
	before := idleCalls(t, raw)
	time.Sleep(300 * time.Millisecond)
	if n := idleCalls(t, raw) - before; n != 0 {
		t.Fatalf("%d Redis commands in 300ms while nothing changed", n)
	}

	// Changes back to back: each observer still gets every one.
	for i := range 5 {
		v := fmt.Sprintf("a%d", i+2)
		if err := a.Proclaim(bg, v); err != nil {
			t.Fatal(err)
		}
		want = append(want, election.Leader{Value: v, Term: ta})
	}

	elected := make(chan context.Context, 1)
	go func() {
		lctx, err := b.Campaign(bg, "b")
		if err != nil {
			t.Error(err)
			close(elected)
			return
		}
		elected <- lctx
	}()
	time.Sleep(50 * time.Millisecond)
	if err := a.Resign(bg); err != nil {
		t.Fatal(err)
	}
	bctx, ok := <-elected
	if !ok {
		t.FailNow()
	}
	want = append(want, election.Leader{Value: "b", Term: termT(t, bctx)})
	allSeen(want[len(want)-1])
	if err := b.Resign(bg); err != nil {
		t.Fatal(err)
	}

	cancel()
	wg.Wait()
	for i, s := range seen {
		if !slices.Equal(s, want) {
			t.Fatalf("observer %d saw %+v, want %+v", i, s, want)
		}
	}
}

// idleCalls sums the commands the server behind raw has run but INFO's
// (the test's own).
func idleCalls(t *testing.T, raw *redis.Client) int64 {
	t.Helper()
	var n int64
	for cmd, calls := range redistest.CommandCalls(t, raw) {
		if cmd != "info" {
			n += calls
		}
	}
	return n
}

// TestObserveEnds: an observer's channel closes when its context ends or
// its Client closes.
func TestObserveEnds(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	rc, err := relock.New(srv.LockClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	byCtx, err := election.New(rc, name, nil).Observe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byClose, err := election.New(rc, name, nil).Observe(bg)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	closed(t, byCtx, "after its context ended")
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	closed(t, byClose, "after its Client closed")
	if _, err := election.New(rc, name, nil).Observe(bg); !errors.Is(err, relock.ErrClosed) {
		t.Fatalf("Observe on a closed Client = %v, want ErrClosed", err)
	}
}

func closed(t *testing.T, ch <-chan election.Leader, when string) {
	t.Helper()
	deadline := time.After(2 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatalf("observer channel open 2s %s", when)
		}
	}
}
