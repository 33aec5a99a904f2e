package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/fair"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/nonreentrant"
	"github.com/relock-go/relock/permits"
	"github.com/relock-go/relock/reentrant"
	"github.com/relock-go/relock/rwlock"
	"github.com/relock-go/relock/semaphore"
	"github.com/relock-go/relock/spinlock"
)

// lateResult is scenario (t): how long a lock stays unavailable after an
// acquire attempt cut off from its caller (its reply lost) runs on the
// server late, after the caller gave up. Redis orders nothing across
// connections, so such an attempt may run after the give-up sent on
// another one; relock records the attempts it gave up
// (relock_lock_gone:{<name>}; a semaphore's in
// relock_semaphore_attempts:{<name>}, expirable permits' in
// relock_permits_gone:{<name>}) and its acquire scripts refuse a late
// one. Without that, the gone caller held the lock, or blocked the fair
// queue, for a whole lease, and a semaphore's permit for good. The
// bench forces the reordering with redistest.Late, a go-redis hook that
// keeps the attempts' calls instead of sending them and sends them when
// told.
type lateResult struct {
	Runs int `json:"runs_per_primitive"`
	// WaitMs is the TryLock wait of the caller whose replies are lost.
	WaitMs int `json:"wait_ms"`
	// PollUs is the pause between a fresh client's TryLock(0) calls;
	// BoundMs is how long they go on before a run is counted stuck.
	PollUs   int `json:"poll_us"`
	BoundMs  int `json:"stuck_after_ms"`
	TargetMs int `json:"target_max_ms"`
	// LeaseMs is the lease a late attempt that takes the lock sets, and
	// so how long it held the lock before the fix.
	LeaseMs int       `json:"lease_ms"`
	Rows    []lateRow `json:"primitives"`
}

// lateRow is one primitive's runs.
type lateRow struct {
	Primitive string `json:"primitive"`
	// Unavailable runs from the return of the Play that ran the late
	// attempts to the return of the first TryLock(0) of a fresh client
	// that took the lock; BoundMs for a stuck run. Held and Free split it
	// by order: the attempts played while the holder still held the lock
	// (its Unlock then counted in the figure), or once it had unlocked.
	Unavailable dist `json:"unavailable"`
	Held        dist `json:"unavailable_played_while_held"`
	Free        dist `json:"unavailable_played_once_free"`
	// Stuck counts the runs whose lock no fresh TryLock took within
	// BoundMs: 0 expected.
	Stuck int `json:"stuck"`
	// Attempts is how many acquire attempts ran late, over every run.
	Attempts int `json:"late_attempts"`
	// Failed counts the runs that measured nothing: a call that failed,
	// a TryLock whose replies were lost returning other than
	// ErrNotAcquired, or no attempt kept to run late. 0 expected.
	Failed   int    `json:"failed_runs"`
	FirstErr string `json:"first_error,omitempty"`
	// Met: every run measured, none unavailable past TargetMs.
	Met bool   `json:"met"`
	Err string `json:"error,omitempty"` // of the set-up, or every run failed
}

// note is what a progress line adds to the row's figures: its error,
// or the first error of a failed run.
func (x *lateRow) note() string {
	switch {
	case x.Err != "":
		return "  ERROR: " + x.Err
	case x.Failed > 0:
		return "  first: " + x.FirstErr
	}
	return ""
}

const (
	// lateID names scenario (t) for -only.
	lateID = "relock late"
	// lateWait is the TryLock wait of the caller whose replies are lost:
	// time for an attempt and, where relock retries one whose reply was
	// lost, a second.
	lateWait = 5 * time.Millisecond
	// latePoll is the pause between a fresh client's attempts.
	latePoll = 500 * time.Microsecond
	// lateBound is how long a fresh client tries before a run is
	// counted stuck: far past the target, far short of the lease.
	lateBound = time.Second
	// lateTarget is the goal: a lock free again this soon after.
	lateTarget = 100 * time.Millisecond
	// lateRunWithin bounds one run's calls, which the server answers.
	lateRunWithin = 10 * time.Second
)

// A latePrimitive is one row of scenario (t): the lock of a primitive
// named name on rc. prepare, if set, readies each run's name before the
// holder locks it: a semaphore's count.
type latePrimitive struct {
	name    string
	lock    func(rc *relock.Client, name string) relock.Locker
	prepare func(ctx context.Context, rc *relock.Client, name string) error
}

// latePrimitives lists scenario (t)'s locks: every hash lock whose
// acquire scripts refuse a late attempt, the read/write lock by its
// write side (an exclusive lock a late reader would block too); a
// multilock over two reentrant locks; an election, each Lock the
// Campaign of an Election of its own; and both semaphores with a single
// permit, whose acquires refuse a late attempt too.
var latePrimitives = []latePrimitive{
	{name: "reentrant", lock: func(rc *relock.Client, name string) relock.Locker { return reentrant.New(rc, name, nil) }},
	{name: "fair", lock: func(rc *relock.Client, name string) relock.Locker { return fair.New(rc, name, nil) }},
	{name: "nonreentrant", lock: func(rc *relock.Client, name string) relock.Locker { return nonreentrant.New(rc, name, nil) }},
	{name: "nonreentrant fair", lock: func(rc *relock.Client, name string) relock.Locker { return nonreentrant.NewFair(rc, name, nil) }},
	{name: "spinlock", lock: func(rc *relock.Client, name string) relock.Locker { return spinlock.New(rc, name, nil) }},
	{name: "rwlock writer", lock: func(rc *relock.Client, name string) relock.Locker { return rwlock.New(rc, name, nil).Writer() }},
	{name: "grouplock", lock: func(rc *relock.Client, name string) relock.Locker {
		return grouplock.New(rc, name, []string{"a", "b"}, nil)
	}},
	{name: "multilock", lock: func(rc *relock.Client, name string) relock.Locker {
		return multilock.New(reentrant.New(rc, name+":a", nil), reentrant.New(rc, name+":b", nil))
	}},
	{name: "election", lock: func(rc *relock.Client, name string) relock.Locker { return lateCandidate{rc: rc, name: name} }},
	{name: "semaphore", lock: func(rc *relock.Client, name string) relock.Locker {
		return lateSemaphore{semaphore.New(rc, name, &semaphore.Options{TTL: semaphoreTTL})}
	}, prepare: func(ctx context.Context, rc *relock.Client, name string) error {
		return setOnce(semaphore.New(rc, name, &semaphore.Options{TTL: semaphoreTTL}).TrySetPermits(ctx, 1))
	}},
	{name: "permits", lock: func(rc *relock.Client, name string) relock.Locker { return latePermit{permits.New(rc, name, nil)} },
		prepare: func(ctx context.Context, rc *relock.Client, name string) error {
			return setOnce(permits.New(rc, name, nil).TrySetPermits(ctx, 1))
		}},
}

// lateScripts are the acquire scripts of every hash lock and of both
// semaphores: the calls the hook keeps. An election's are its fair
// lock's: its leader record (lua.ElectionElect) is written only
// once the lock is taken, which no kept attempt lets the waiter do.
var lateScripts = []*redis.Script{
	lua.Acquire(), lua.FencedAcquire(), lua.NonReentrantAcquire(), lua.FairAcquire(),
	lua.SpinAcquire(), lua.RWReadAcquire(), lua.RWWriteAcquire(), lua.GroupAcquire(),
	lua.SemaphoreAcquire(), lua.PermitsAcquire(),
}

// A lateCandidate is an election as a relock.Locker: Lock campaigns with
// an Election of its own, which the leadership's context carries to
// Unlock, which resigns.
type lateCandidate struct {
	rc   *relock.Client
	name string
}

// lateElectionKey is the context key of a lateCandidate's Election.
type lateElectionKey struct{}

func (c lateCandidate) Name() string { return c.name }

func (c lateCandidate) Lock(ctx context.Context) (context.Context, error) {
	e := election.New(c.rc, c.name, nil)
	lctx, err := e.Campaign(ctx, "bench")
	if err != nil {
		return nil, err
	}
	return context.WithValue(lctx, lateElectionKey{}, e), nil
}

func (c lateCandidate) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	e := election.New(c.rc, c.name, nil)
	lctx, err := e.TryCampaign(ctx, "bench", wait)
	if err != nil {
		return nil, err
	}
	return context.WithValue(lctx, lateElectionKey{}, e), nil
}

func (c lateCandidate) Unlock(ctx context.Context) error {
	e, ok := ctx.Value(lateElectionKey{}).(*election.Election)
	if !ok {
		return errors.New("not a leadership's context")
	}
	return e.Resign(ctx)
}

// A lateSemaphore is one permit of a semaphore as a relock.Locker: the
// permits have no owner, and Lock's context is the caller's.
type lateSemaphore struct{ s *semaphore.Semaphore }

func (l lateSemaphore) Name() string { return l.s.Name() }

func (l lateSemaphore) Lock(ctx context.Context) (context.Context, error) {
	if err := l.s.Acquire(ctx, 1); err != nil {
		return nil, err
	}
	return ctx, nil
}

func (l lateSemaphore) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	if err := l.s.TryAcquire(ctx, 1, wait); err != nil {
		return nil, err
	}
	return ctx, nil
}

func (l lateSemaphore) Unlock(ctx context.Context) error { return l.s.Release(ctx, 1) }

// A latePermit is an expirable permit as a relock.Locker: Lock's context
// is the permit's, carrying it to Unlock, which releases it.
type latePermit struct{ s *permits.Semaphore }

// latePermitKey is the context key of a latePermit's Permit.
type latePermitKey struct{}

func (l latePermit) Name() string { return l.s.Name() }

func (l latePermit) Lock(ctx context.Context) (context.Context, error) {
	p, err := l.s.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return context.WithValue(p.Context(), latePermitKey{}, p), nil
}

func (l latePermit) TryLock(ctx context.Context, wait time.Duration) (context.Context, error) {
	p, err := l.s.TryAcquire(ctx, wait)
	if err != nil {
		return nil, err
	}
	return context.WithValue(p.Context(), latePermitKey{}, p), nil
}

func (l latePermit) Unlock(ctx context.Context) error {
	p, ok := ctx.Value(latePermitKey{}).(*permits.Permit)
	if !ok {
		return errors.New("not a permit's context")
	}
	return p.Release(ctx)
}

// runLate runs scenario (t): each primitive's LateRuns runs, one after
// another, a line of progress per primitive. It deletes nothing: what
// relock leaves is what it measures, and every run has a name of its
// own, so that one run's leftovers cannot slow the next.
func (e *env) runLate() *lateResult {
	res := &lateResult{Runs: e.cfg.LateRuns, WaitMs: int(lateWait / time.Millisecond), PollUs: int(latePoll / time.Microsecond),
		BoundMs: int(lateBound / time.Millisecond), TargetMs: int(lateTarget / time.Millisecond), LeaseMs: int(relock.DefaultWatchdogTimeout / time.Millisecond)}
	base := e.name("late")
	for _, p := range latePrimitives {
		row := e.lateRow(p, base)
		res.Rows = append(res.Rows, row)
		perRun := 0.0
		if n := row.Unavailable.N; n > 0 {
			perRun = float64(row.Attempts) / float64(n)
		}
		e.progress("late acquire %-18s %d runs: unavailable p50 %6.2fms max %7.2fms (played while held: p50 %5.2fms max %7.2fms; once free: p50 %5.2fms max %7.2fms)  stuck %d  late attempts/run %.1f  failed %d%s",
			p.name, row.Unavailable.N, row.Unavailable.P50/1e3, row.Unavailable.Max/1e3, row.Held.P50/1e3, row.Held.Max/1e3, row.Free.P50/1e3, row.Free.Max/1e3,
			row.Stuck, perRun, row.Failed, row.note())
	}
	return res
}

// A lateFixture is one primitive's clients, each as if of a process of
// its own: the holder's, the waiter's, whose acquire attempts the hook
// keeps, and the fresh client that tries the lock once they ran.
type lateFixture struct {
	p      latePrimitive
	hook   *redistest.Late
	holder *relock.Client
	waiter *relock.Client
	fresh  *relock.Client
	// play is the client the kept attempts run through: another
	// connection than the waiter's give-up took, as with a reply lost on
	// a connection the server still reads.
	play  *redis.Client
	close []func()
}

// lateRow runs primitive p's runs on clients of its own, its names
// starting with base.
func (e *env) lateRow(p latePrimitive, base string) lateRow {
	row := lateRow{Primitive: p.name}
	f, err := e.lateFixture(p)
	defer f.stop()
	if err != nil {
		row.Err = err.Error()
		return row
	}
	var all, held, free []int64
	for i := range e.cfg.LateRuns {
		// Even runs play the late attempts while the lock is held, where
		// they would register or queue the gone waiter; odd runs once it
		// is free, where they would take it.
		whileHeld := i%2 == 0
		took, stuck, attempts, err := f.run(fmt.Sprintf("%s:%s:%d", base, strings.ReplaceAll(p.name, " ", "-"), i), whileHeld)
		if err != nil {
			if row.Failed++; row.FirstErr == "" {
				row.FirstErr = err.Error()
			}
			continue
		}
		row.Attempts += attempts
		if stuck {
			row.Stuck++
		}
		all = append(all, int64(took))
		if whileHeld {
			held = append(held, int64(took))
		} else {
			free = append(free, int64(took))
		}
	}
	row.Unavailable, row.Held, row.Free = summarize(all), summarize(held), summarize(free)
	if len(all) == 0 && row.Failed > 0 {
		row.Err = "every run failed; first: " + row.FirstErr
	}
	row.Met = row.Err == "" && row.Failed == 0 && row.Unavailable.N > 0 && row.Unavailable.Max <= float64(lateTarget/time.Microsecond)
	return row
}

// lateFixture makes p's clients. Whatever it returns, stop closes what
// it made.
func (e *env) lateFixture(p latePrimitive) (*lateFixture, error) {
	f := &lateFixture{p: p}
	relockOn := func(rdb *redis.Client) (*relock.Client, error) {
		// Replica sync off: on a server with replicas (one given with
		// -redis may have some) relock pipelines a WAIT behind each
		// acquire, and the hook keeps only calls sent alone. On one
		// without, it changes nothing.
		rc, err := relock.New(rdb, &relock.Options{SyncReplicas: relock.SyncOff, Logger: quiet})
		if err != nil {
			rdb.Close()
			return nil, err
		}
		f.close = append(f.close, func() { rc.Close(); rdb.Close() })
		return rc, nil
	}
	var err error
	if f.holder, err = relockOn(newGoRedis(e.addr, openOpts{}, true)); err != nil {
		return f, err
	}
	if f.fresh, err = relockOn(newGoRedis(e.addr, openOpts{}, true)); err != nil {
		return f, err
	}
	// With relock's options (no retries, deadlines from the call's
	// context) relock runs its scripts through this very client, and so
	// through the hook; otherwise it would make a copy of its own.
	rdb := newGoRedis(e.addr, openOpts{}, true)
	f.hook = redistest.NewLate(lateScripts...)
	rdb.AddHook(f.hook)
	if f.waiter, err = relockOn(rdb); err != nil {
		return f, err
	}
	f.play = redis.NewClient(&redis.Options{Addr: e.addr, ClientName: "relock-bench-late"})
	f.close = append(f.close, func() { f.play.Close() })
	return f, nil
}

// stop closes f's clients.
func (f *lateFixture) stop() {
	for _, c := range f.close {
		c()
	}
}

// run is one run on the lock named name: p's prepare readies it, if p
// has one, and the holder locks it; the waiter tries it for lateWait
// with every acquire attempt kept (each fails as on a dropped
// connection), and gives up; then the kept
// attempts run (Play) and the holder unlocks, in that order when
// whileHeld, else the other way round. From Play's return a fresh client
// tries the lock every latePoll until it takes it (took is then how
// long that was) or lateBound passes (stuck, took lateBound). attempts
// is how many attempts ran late. An error means the run measured
// nothing.
func (f *lateFixture) run(name string, whileHeld bool) (took time.Duration, stuck bool, attempts int, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), lateRunWithin)
	defer cancel()
	if f.p.prepare != nil {
		if err := f.p.prepare(ctx, f.holder, name); err != nil {
			return 0, false, 0, fmt.Errorf("set-up: %w", err)
		}
	}
	holder := f.p.lock(f.holder, name)
	hctx, err := holder.Lock(relock.WithNewOwner(ctx))
	if err != nil {
		return 0, false, 0, fmt.Errorf("holder's Lock: %w", err)
	}
	// Every step runs, whatever failed before it, so that the kept
	// attempts do not spill into the next run and the lock is left as
	// relock leaves it; the first error is the run's.
	note := func(what string, e error) {
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %w", what, e)
		}
	}
	f.hook.Arm(true)
	wctx, werr := f.p.lock(f.waiter, name).TryLock(relock.WithNewOwner(ctx), lateWait)
	f.hook.Arm(false)
	switch {
	case werr == nil:
		note("waiter's TryLock with every reply lost", errors.New("took the held lock"))
		note("waiter's Unlock", f.p.lock(f.waiter, name).Unlock(wctx))
	case !errors.Is(werr, relock.ErrNotAcquired):
		note("waiter's TryLock with every reply lost, want ErrNotAcquired", werr)
	}
	if !whileHeld {
		note("holder's Unlock", holder.Unlock(hctx))
	}
	attempts, perr := f.hook.Play(ctx, f.play)
	played := time.Now()
	note("Play", perr)
	if whileHeld {
		note("holder's Unlock", holder.Unlock(hctx))
	}
	if perr == nil && attempts == 0 {
		note("Play", errors.New("no acquire attempt was kept to run late"))
	}
	if err != nil {
		return 0, false, 0, err
	}
	fresh := f.p.lock(f.fresh, name)
	owner := relock.WithNewOwner(ctx)
	for {
		lctx, terr := fresh.TryLock(owner, 0)
		switch {
		case terr == nil:
			took = time.Since(played)
			if uerr := fresh.Unlock(lctx); uerr != nil {
				return 0, false, 0, fmt.Errorf("fresh client's Unlock: %w", uerr)
			}
			return took, false, attempts, nil
		case !errors.Is(terr, relock.ErrNotAcquired):
			return 0, false, 0, fmt.Errorf("fresh client's TryLock(0): %w", terr)
		case time.Since(played) >= lateBound:
			return lateBound, true, attempts, nil
		}
		time.Sleep(latePoll)
	}
}

// lateSection writes scenario (t)'s table.
func (r *report) lateSection(b *strings.Builder) {
	l := r.Late
	b.WriteString("\n## (t) Late acquire: how long a lock stays unavailable after a cut-off acquire runs late\n\n")
	fmt.Fprintf(b, "An acquire attempt whose reply was lost (its caller's deadline cut the read, the connection dropped) may still run on the server after the caller gave up on another connection: "+
		"relock records the attempts it gave up (relock_lock_gone:{<name>}; a semaphore's in relock_semaphore_attempts:{<name>}, expirable permits' in relock_permits_gone:{<name>}) and its acquire scripts refuse a late one; "+
		"before, such an attempt held the lock, or blocked the fair queue, for the whole lease (%s), and a semaphore's permit for good. "+
		"Each primitive, %d times on names of its own: a holder locks; a waiter, whose go-redis client has a hook (internal/testing/redistest's Late) that keeps every acquire script call instead of sending it and fails it as a dropped connection would, "+
		"calls TryLock with a %d ms wait, which must give up with ErrNotAcquired; then the kept calls are sent on another connection (Play) and the holder unlocks, in that order in even runs (the late attempts find the lock held and would register or queue the waiter) "+
		"and the other way round in odd ones (they find it free and would take it). "+
		"**unavailable**: from Play's return until a fresh client's TryLock(0), tried every %d µs, took the lock, the holder's Unlock included in even runs; a run whose lock no such TryLock took within %s is **stuck**, and counted as %s. "+
		"The bench deletes nothing: the figures are what relock leaves. "+
		"Run it alone with `cd bench && go run . -scenarios t`.\n\n",
		secs(l.LeaseMs), l.Runs, l.WaitMs, l.PollUs, secs(l.BoundMs), secs(l.BoundMs))
	t := table{b}
	t.header(1, "primitive", "runs", "unavailable p50", "max", "stuck past "+secs(l.BoundMs))
	for _, x := range l.Rows {
		if x.Err != "" {
			t.row(x.Primitive, "error: "+x.Err)
			continue
		}
		runs := fmt.Sprint(x.Unavailable.N)
		if x.Failed > 0 {
			runs += fmt.Sprintf(" (%d failed; first: %s)", x.Failed, x.FirstErr)
		}
		t.row(x.Primitive, runs, us(x.Unavailable.P50), us(x.Unavailable.Max), fmt.Sprint(x.Stuck))
	}
}

// target checks scenario (t): every primitive's lock free again within
// TargetMs of its late attempts in every run. The measured text names
// the primitive with the longest, those that missed and those that
// failed.
func (l *lateResult) target() target {
	t := target{Goal: fmt.Sprintf("relock, an acquire cut off and run late: every primitive's lock free again ≤ %d ms after (max over %d runs)", l.TargetMs, l.Runs)}
	var worst *lateRow
	var missed, failed []string
	stuck := 0
	for i := range l.Rows {
		x := &l.Rows[i]
		switch {
		case x.Err != "":
			failed = append(failed, x.Primitive)
			continue
		case x.Failed > 0:
			failed = append(failed, fmt.Sprintf("%s (%d runs)", x.Primitive, x.Failed))
		}
		if x.Unavailable.Max > float64(l.TargetMs)*1e3 {
			missed = append(missed, x.Primitive)
		}
		stuck += x.Stuck
		if worst == nil || x.Unavailable.Max > worst.Unavailable.Max {
			worst = x
		}
	}
	if worst != nil {
		t.Measured = fmt.Sprintf("max %s (%s); %d runs stuck past %s; %d of %d primitives missed",
			us(worst.Unavailable.Max), worst.Primitive, stuck, secs(l.BoundMs), len(missed), len(l.Rows))
	}
	if len(missed) > 0 {
		t.Measured += ": " + strings.Join(missed, ", ")
	}
	if len(failed) > 0 {
		t.Measured += "; failed: " + strings.Join(failed, ", ")
	}
	t.Met = worst != nil && len(missed) == 0 && len(failed) == 0
	return t
}

// secs renders a duration given in milliseconds, in seconds: the bound
// and the lease, round figures.
func secs(ms int) string { return fmt.Sprintf("%g s", float64(ms)/1e3) }
