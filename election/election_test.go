package election_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestOneLeaderAtATime: five candidates on five Clients campaign over
// and over; exactly one leads at a time, and the terms of successive
// leaderships strictly increase.
func TestOneLeaderAtATime(t *testing.T) {
	name := redistest.Key(t)
	const candidates, rounds = 5, 8
	var (
		leaders atomic.Int32
		mu      sync.Mutex // guards terms
		terms   []int64
		wg      sync.WaitGroup
	)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i := range candidates {
		e := election.New(newClient(t, nil), name, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				lctx, err := e.Campaign(ctx, "candidate")
				if err != nil {
					t.Errorf("candidate %d: %v", i, err)
					return
				}
				if n := leaders.Add(1); n != 1 {
					t.Errorf("%d leaders at once", n)
				}
				term, _ := election.TermOf(lctx)
				mu.Lock()
				terms = append(terms, term)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				leaders.Add(-1)
				if err := e.Resign(ctx); err != nil {
					t.Errorf("candidate %d: Resign: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(terms) != candidates*rounds {
		t.Fatalf("%d leaderships, want %d", len(terms), candidates*rounds)
	}
	for i := 1; i < len(terms); i++ {
		if terms[i] <= terms[i-1] {
			t.Fatalf("term %d followed term %d: terms must strictly increase (%v)", terms[i], terms[i-1], terms)
		}
	}
}

// TestArrivalOrder: candidates are elected in the order they started
// waiting, and a resignation hands over within milliseconds.
func TestArrivalOrder(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	first := election.New(newClient(t, nil), name, nil)
	lctx := campaignT(t, first, bg, "first")
	raw := srv.Client(t)
	queue := "redisson_lock_queue:relock_election:{" + name + "}"
	type elected struct {
		i  int
		at time.Time
	}
	got := make(chan elected, 3)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range 3 {
		e := election.New(newClient(t, nil), name, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.Campaign(bg, "next"); err != nil {
				t.Error(err)
				return
			}
			got <- elected{i, time.Now()}
			if err := e.Resign(bg); err != nil {
				t.Error(err)
			}
		}()
		deadline := time.Now().Add(5 * time.Second)
		for raw.LLen(bg, queue).Val() != int64(i+1) {
			if time.Now().After(deadline) {
				t.Fatalf("candidate %d never queued", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	resigned := time.Now()
	if err := first.Resign(bg); err != nil {
		t.Fatal(err)
	}
	if lctx.Err() == nil {
		t.Fatal("leadership context not cancelled by Resign")
	}
	for want := range 3 {
		select {
		case g := <-got:
			if g.i != want {
				t.Fatalf("candidate %d elected in place %d", g.i, want)
			}
			if want == 0 {
				took := g.at.Sub(resigned)
				t.Logf("the next candidate was elected %v after Resign began", took)
				if took > time.Second {
					t.Fatalf("hand-over took %v", took)
				}
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("candidate %d not elected", want)
		}
	}
}

// TestLeaderAndProclaim: Leader reports the leader's value and term,
// Proclaim changes the value, a non-leader cannot proclaim or resign,
// and after a resignation there is no leader.
func TestLeaderAndProclaim(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	e := election.New(newClient(t, nil), name, nil)
	other := election.New(newClient(t, nil), name, nil)
	if _, err := other.Leader(bg); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader before any election = %v, want ErrNoLeader", err)
	}
	lctx := campaignT(t, e, bg, "a")
	term := termT(t, lctx)
	if l, err := other.Leader(bg); err != nil || l != (election.Leader{Value: "a", Term: term}) {
		t.Fatalf("Leader = %+v, %v; want a, %d", l, err, term)
	}
	if err := e.Proclaim(bg, "b"); err != nil {
		t.Fatal(err)
	}
	if l, err := other.Leader(bg); err != nil || l != (election.Leader{Value: "b", Term: term}) {
		t.Fatalf("Leader after Proclaim = %+v, %v; want b, %d", l, err, term)
	}
	if err := other.Proclaim(bg, "c"); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Proclaim by a non-leader = %v, want ErrNotLeader", err)
	}
	if err := other.Resign(bg); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Resign by a non-leader = %v, want ErrNotLeader", err)
	}
	if _, err := e.Campaign(bg, "again"); !errors.Is(err, election.ErrCampaigning) || errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("Campaign while leading = %v, want ErrCampaigning alone", err)
	}
	if _, err := e.TryCampaign(bg, "again", 0); !errors.Is(err, election.ErrCampaigning) {
		t.Fatalf("TryCampaign while leading = %v, want ErrCampaigning", err)
	}
	if err := e.Resign(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Leader(bg); !errors.Is(err, election.ErrNoLeader) {
		t.Fatalf("Leader after Resign = %v, want ErrNoLeader", err)
	}
	if err := e.Proclaim(bg, "d"); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Proclaim after Resign = %v, want ErrNotLeader", err)
	}
	// Campaigning again gives a new term.
	lctx = campaignT(t, e, bg, "e")
	if next := termT(t, lctx); next <= term {
		t.Fatalf("term %d after term %d", next, term)
	}
	if err := e.Resign(bg); err != nil {
		t.Fatal(err)
	}
}

// TestLostLeadership: a leader whose lock is deleted under it is told
// (ErrLockLost) at its next renewal; another candidate is elected with
// a greater term, and the old leader cannot proclaim.
func TestLostLeadership(t *testing.T) {
	srv.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	const lease = 600 * time.Millisecond
	e := election.New(newClient(t, &relock.Options{WatchdogTimeout: lease}), name, nil)
	lctx := campaignT(t, e, bg, "old")
	term := termT(t, lctx)
	srv.Client(t).Del(bg, "relock_election:{"+name+"}")
	select {
	case <-lctx.Done():
	case <-time.After(5 * lease):
		t.Fatal("leader not told of the deleted lock")
	}
	if !errors.Is(context.Cause(lctx), relock.ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", context.Cause(lctx))
	}
	if err := e.Proclaim(bg, "stale"); !errors.Is(err, election.ErrNotLeader) {
		t.Fatalf("Proclaim after the loss = %v, want ErrNotLeader", err)
	}
	next := election.New(newClient(t, nil), name, nil)
	nctx := campaignT(t, next, bg, "new")
	if n := termT(t, nctx); n <= term {
		t.Fatalf("term %d after the lost term %d", n, term)
	}
	if l, err := e.Leader(bg); err != nil || l.Value != "new" {
		t.Fatalf("Leader = %+v, %v; want the new leader", l, err)
	}
	if err := next.Resign(bg); err != nil {
		t.Fatal(err)
	}
}

// TestContextEndsLeadership: when the Campaign's context ends while the
// candidate leads, it resigns: the next candidate is elected at once.
func TestContextEndsLeadership(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	ctx, cancel := context.WithCancel(bg)
	e := election.New(newClient(t, nil), name, nil)
	lctx := campaignT(t, e, ctx, "short")
	next := election.New(newClient(t, nil), name, nil)
	got := make(chan error, 1)
	go func() {
		_, err := next.Campaign(bg, "next")
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("next candidate not elected after the leader's context ended")
	}
	if lctx.Err() == nil {
		t.Fatal("leadership context not cancelled")
	}
	// The Election may campaign again.
	if _, err := e.Leader(bg); err != nil {
		t.Fatal(err)
	}
	if err := next.Resign(bg); err != nil {
		t.Fatal(err)
	}
}

// TestKilledLeader: a leader's process killed with SIGKILL is succeeded
// within its lease + 1 s by a candidate already waiting.
func TestKilledLeader(t *testing.T) {
	redistest.Parallel(t)
	srv.RequireReal(t)
	bg := context.Background()
	name := redistest.Key(t)
	const lease = time.Second
	child, line := redistest.StartChild(t, "lead", srv.Addr, name, "1000", "0")
	t.Logf("child elected, term %s", line)
	next := election.New(newClient(t, nil), name, nil)
	got := make(chan time.Time, 1)
	go func() {
		if _, err := next.Campaign(bg, "next"); err != nil {
			t.Error(err)
			return
		}
		got <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond)
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case at := <-got:
		took := at.Sub(killed)
		t.Logf("new leader %v after the kill (lease %v)", took, lease)
		if took > lease+time.Second {
			t.Fatalf("new leader %v after the kill, over lease + 1s", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no new leader 10s after the kill")
	}
	if err := next.Resign(bg); err != nil {
		t.Fatal(err)
	}
}

// TestCloseEndsCampaignAndLeadership: Close ends a waiting Campaign with
// ErrClosed and a leadership with cause ErrClosed, releasing the lock so
// that the next candidate is elected at once.
func TestCloseEndsCampaignAndLeadership(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	leaderRC, err := relock.New(srv.LockClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	waiterRC, err := relock.New(srv.LockClient(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	lctx := campaignT(t, election.New(leaderRC, name, nil), bg, "leader")
	got := make(chan error, 1)
	go func() {
		_, err := election.New(waiterRC, name, nil).Campaign(bg, "waiter")
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := waiterRC.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if !errors.Is(err, relock.ErrClosed) {
			t.Fatalf("Campaign after Close = %v, want ErrClosed", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Campaign not ended by Close")
	}
	next := election.New(newClient(t, nil), name, nil)
	elected := make(chan time.Time, 1)
	go func() {
		if _, err := next.Campaign(bg, "next"); err != nil {
			t.Error(err)
			return
		}
		elected <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond)
	closed := time.Now()
	if err := leaderRC.Close(); err != nil {
		t.Fatal(err)
	}
	// The leadership's context ends right after the lock's, which Close
	// cancels, on a goroutine of its own (context.AfterFunc): it may
	// still be running as Close returns.
	select {
	case <-lctx.Done():
	case <-time.After(2 * time.Second):
		t.Fatal("leadership not ended within 2s of the leader's Close")
	}
	if !errors.Is(context.Cause(lctx), relock.ErrClosed) {
		t.Fatalf("leadership cause after Close = %v, want ErrClosed", context.Cause(lctx))
	}
	select {
	case at := <-elected:
		t.Logf("next candidate elected %v after Close began", at.Sub(closed))
	case <-time.After(2 * time.Second):
		t.Fatal("next candidate not elected within 2s of the leader's Close")
	}
	if err := next.Resign(bg); err != nil {
		t.Fatal(err)
	}
}

// TestBadInput: bad input is reported by every method, never a panic.
func TestBadInput(t *testing.T) {
	bg := context.Background()
	rc := newClient(t, nil)
	for what, tc := range map[string]struct {
		e    *election.Election
		want error
	}{
		"nil client":                {election.New(nil, "x", nil), relock.ErrInvalidArgument},
		"typed nil":                 {election.New((*relock.Client)(nil), "x", nil), relock.ErrInvalidArgument},
		"empty name":                {election.New(rc, "", nil), relock.ErrInvalidName},
		"bad tag":                   {election.New(rc, "a{", nil), relock.ErrInvalidName},
		"negative wait":             {election.New(rc, "x", &election.Options{WaitTimeout: -time.Second}), relock.ErrInvalidArgument},
		"negative WatchdogTimeout":  {election.New(rc, "x", &election.Options{WatchdogTimeout: -time.Second}), relock.ErrInvalidArgument},
		"WatchdogTimeout too short": {election.New(rc, "x", &election.Options{WatchdogTimeout: relock.MinWatchdogTimeout - time.Millisecond}), relock.ErrInvalidArgument},
		"WatchdogTimeout of 1ns":    {election.New(rc, "x", &election.Options{WatchdogTimeout: time.Nanosecond}), relock.ErrInvalidArgument},
	} {
		if _, err := tc.e.Campaign(bg, "v"); !errors.Is(err, tc.want) {
			t.Errorf("%s: Campaign = %v, want %v", what, err, tc.want)
		}
		if _, err := tc.e.Leader(bg); !errors.Is(err, tc.want) {
			t.Errorf("%s: Leader = %v, want %v", what, err, tc.want)
		}
		if _, err := tc.e.Observe(bg); !errors.Is(err, tc.want) {
			t.Errorf("%s: Observe = %v, want %v", what, err, tc.want)
		}
		if err := tc.e.Proclaim(bg, "v"); !errors.Is(err, tc.want) {
			t.Errorf("%s: Proclaim = %v, want %v", what, err, tc.want)
		}
		if err := tc.e.Resign(bg); !errors.Is(err, tc.want) {
			t.Errorf("%s: Resign = %v, want %v", what, err, tc.want)
		}
	}
}

// TestCampaignWhileWaiting: a Campaign or TryCampaign on an Election
// whose Campaign waits in line fails with ErrCampaigning, a state
// conflict, not bad input; the waiting Campaign is unharmed, and once it
// ends the Election campaigns again.
func TestCampaignWhileWaiting(t *testing.T) {
	bg := context.Background()
	name := redistest.Key(t)
	leader := election.New(newClient(t, nil), name, nil)
	campaignT(t, leader, bg, "leader")
	e := election.New(newClient(t, nil), name, nil)

	ctx, cancel := context.WithCancel(bg)
	waited := make(chan error, 1)
	go func() {
		_, err := e.Campaign(ctx, "waiting")
		waited <- err
	}()
	raw := srv.Client(t)
	queue := layout.FairQueue(layout.ElectionLock(name))
	redistest.Eventually(t, 10*time.Second, "the first Campaign in line", func() bool {
		return raw.LLen(bg, queue).Val() == 1
	})
	if _, err := e.Campaign(bg, "second"); !errors.Is(err, election.ErrCampaigning) || errors.Is(err, relock.ErrInvalidArgument) {
		t.Fatalf("Campaign while waiting = %v, want ErrCampaigning alone", err)
	}
	if _, err := e.TryCampaign(bg, "second", 0); !errors.Is(err, election.ErrCampaigning) {
		t.Fatalf("TryCampaign while waiting = %v, want ErrCampaigning", err)
	}
	cancel()
	if err := <-waited; !errors.Is(err, relock.ErrNotAcquired) {
		t.Fatalf("the waiting Campaign, cancelled = %v, want ErrNotAcquired", err)
	}
	if err := leader.Resign(bg); err != nil {
		t.Fatal(err)
	}
	if _, err := e.TryCampaign(bg, "after", time.Second); err != nil {
		t.Fatalf("TryCampaign after the wait ended = %v", err)
	}
	if err := e.Resign(bg); err != nil {
		t.Fatal(err)
	}
}
