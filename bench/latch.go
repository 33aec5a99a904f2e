package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/latch"
)

// latchResult is scenario (l): many goroutines on a few clients awaiting
// one latch of count 1, all woken by one CountDown, over a few rounds.
type latchResult struct {
	Kind     string `json:"kind"`
	Awaiters int    `json:"awaiters"`
	Clients  int    `json:"clients"` // the awaiters'; the CountDown comes from one more
	Rounds   int    `json:"rounds"`

	// Wake runs from just before CountDown is called to an Await's
	// return, for every awaiter of every round.
	Wake dist `json:"wake"`
	// Early counts the Await calls that returned before the CountDown:
	// must be 0.
	Early int `json:"returned_before_count_down"`
	// The parked periods, every awaiter asleep, all rounds together, and
	// the commands clients sent in them: 0 expected.
	ParkedSeconds float64 `json:"parked_s"`
	ParkedCmds    int64   `json:"redis_commands_while_parked"`
	// CmdsPerRound are the commands clients sent in each round, from the
	// TrySetCount to the last Await's return.
	CmdsPerRound []int64 `json:"redis_commands_per_round"`
	// SetupPerRound are those of CmdsPerRound that set clients up once
	// (latchSetup): the first round's, on fresh clients.
	SetupPerRound []int64 `json:"redis_setup_commands_per_round"`
	Err           string  `json:"error,omitempty"`
}

// latchID labels scenario (l)'s row.
const latchID = "relock latch"

// latchUncounted names the commands the latch's clients do not send: the
// ones its scripts run, and the benchmark's own INFO and PUBSUB NUMSUB
// (before Redis 7, commandstats names no subcommand).
var latchUncounted = relockInner("decr", "info", "pubsub", "pubsub|numsub")

// latchSetup names the commands a fresh client sends once, not per
// round: its connections' HELLO and CLIENT calls, the SUBSCRIBE of the
// latch's channel with the PING that confirms it (the channel then stays
// subscribed, relock.Options.Linger), and the EVAL that loads a script
// the first time.
var latchSetup = set("hello", "client", "client|setinfo", "client|setname", "subscribe", "ping", "eval", "script", "script|load")

// latchWithin bounds the wait for a round's awaiters to park, and for
// them to return once the latch opens.
const latchWithin = 30 * time.Second

// runLatch runs scenario (l): LatchRounds rounds on one latch, each
// latchRound, the awaiters spread over LatchClients clients and the
// count set and counted down by one more.
func (e *env) runLatch() (latchResult, error) {
	cfg := e.cfg
	res := latchResult{Kind: latchID, Awaiters: cfg.LatchAwaiters, Clients: cfg.LatchClients, Rounds: cfg.LatchRounds}
	name := e.name("latch")
	latches := make([]*latch.Latch, 1+cfg.LatchClients) // the counter's, then the awaiters'
	rcs := make([]*relock.Client, len(latches))
	for i := range latches {
		rdb, rc, err := newRelock(e.addr, openOpts{})
		if err != nil {
			return res, err
		}
		defer rdb.Close()
		defer rc.Close()
		latches[i], rcs[i] = latch.New(rc, name, nil), rc
	}
	var wakes []int64
	for round := range cfg.LatchRounds {
		w, err := e.latchRound(latches[0], latches[1:], rcs[1:], &res)
		if err != nil {
			return res, fmt.Errorf("round %d: %w", round+1, err)
		}
		wakes = append(wakes, w...)
	}
	res.Wake = summarize(wakes)
	res.ParkedSeconds = round2(res.ParkedSeconds)
	if res.Early > 0 {
		return res, fmt.Errorf("%d Await calls returned before the CountDown", res.Early)
	}
	return res, nil
}

// latchRound gives the latch a count of 1, starts the awaiters (awaiters[i]
// on clients[i]), waits until they are parked, lets them sleep
// LatchSettle, then counts down from counter and returns each awaiter's
// wake-up, in nanoseconds. It adds the round's commands and its parked
// period to res.
func (e *env) latchRound(counter *latch.Latch, awaiters []*latch.Latch, clients []*relock.Client, res *latchResult) ([]int64, error) {
	n := e.cfg.LatchAwaiters
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := e.snapshot()
	switch ok, err := counter.TrySetCount(ctx, 1); {
	case err != nil:
		return nil, err
	case !ok:
		return nil, errors.New("TrySetCount: the latch has a count already")
	}
	returned := make([]int64, n)
	awaited := make(chan error, 1)
	go func() {
		awaited <- parallel(n, n, func(i int) error {
			err := awaiters[i%len(awaiters)].Await(ctx)
			returned[i] = now()
			return err
		})
	}()
	channel := layout.LatchChannel(counter.Name())
	if err := e.parked(ctx, channel, clients, n, before); err != nil {
		return nil, err
	}
	p0 := e.snapshot()
	t := time.Now()
	time.Sleep(e.cfg.LatchSettle)
	res.ParkedCmds += p0.to(e.snapshot()).sent(latchUncounted)
	res.ParkedSeconds += time.Since(t).Seconds()

	opened := now()
	if err := counter.CountDown(ctx); err != nil {
		return nil, err
	}
	select {
	case err := <-awaited:
		if err != nil {
			return nil, err
		}
	case <-time.After(latchWithin):
		return nil, fmt.Errorf("awaiters still waiting %v after the CountDown", latchWithin)
	}
	d := before.to(e.snapshot())
	res.CmdsPerRound = append(res.CmdsPerRound, d.sent(latchUncounted))
	var setup int64
	for cmd := range latchSetup {
		setup += d.calls[cmd]
	}
	res.SetupPerRound = append(res.SetupPerRound, setup)
	wakes := make([]int64, n)
	for i, at := range returned {
		if at < opened {
			res.Early++
		}
		wakes[i] = at - opened
	}
	return wakes, nil
}

// parked waits until a round's awaiters sleep: channel has a subscriber
// per client, the clients count every awaiter among their waiters, and
// the GETs run since since (a client's awaiters share their reads of the
// count once subscribed, and go to sleep) are at least one per client and
// as many as at the last look, 10 ms before.
func (e *env) parked(ctx context.Context, channel string, clients []*relock.Client, awaiters int, since snapshot) error {
	last := int64(-1)
	for deadline := time.Now().Add(latchWithin); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		subs, err := e.admin.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			return fmt.Errorf("PUBSUB NUMSUB: %w", err)
		}
		waiting := 0
		for _, rc := range clients {
			waiting += rc.Stats().Waiters
		}
		gets := since.to(e.snapshot()).calls["get"]
		if subs[channel] == int64(len(clients)) && waiting == awaiters && gets >= int64(len(clients)) && gets == last {
			return nil
		}
		last = gets
	}
	return fmt.Errorf("awaiters not parked within %v", latchWithin)
}
