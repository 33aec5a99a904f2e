package main

import (
	"fmt"
	"math"
	"strings"
)

// targets checks this run against the goals of the current issue, all
// from this one run. They are measured, not asserted: a missed one is
// reported, not failed.
//
//   - W=16, each worker on its own client, 0 µs critical section: the
//     fair lock's acquisitions/s at least the best peer's (the highest
//     among the other libraries' kinds in that cell), with no FIFO
//     inversion and a max wait at most a tenth of that peer's; the
//     reentrant lock's at least 0.8 × the best peer's.
//   - Redis CPU per contended acquisition at W = 4, 16 and 64 (those the
//     run has; one client per worker, 0 µs): the fair lock's at most
//     1.25 × the leanest peer's (the lowest in that cell) and at most
//     1.3 × the bare FIFO hand-off reference's (scenario x), the
//     reentrant lock's at most 1.5 × the leanest peer's.
//   - Uncontended: each relock kind's Lock+Unlock p50 at most 1.15 × two
//     PING round trips; its allocations per Lock+Unlock at most
//     redislock's (tuned, the same go-redis options) + 4, its client CPU
//     per Lock+Unlock at most redislock's, its Redis CPU at most 1.1 ×
//     Redisson's RLock scripts' (the reference kind). These three are
//     medians of UncontendedRounds rounds in which the kinds take turns
//     (see costRounds).
//   - One client per library shared by every goroutine (scenario p), in
//     its cell of many names: relock reentrant's and fair's
//     acquisitions/s at least rueidislock's best configuration's and at
//     least 1.5 × redislock's (tuned), medians of OneClientRounds rounds.
//   - The fair lock's Redis CPU per contended acquisition at W = 4, 16
//     and 64 at most 1.1 × its own scripts' on a bare client (scenario
//     x's reference).
//   - Many locks, scenario c, each relock kind: acquisitions/s at least
//     0.95 × and client CPU per acquisition at most 1.05 × Redisson's
//     RLock script pair on a bare go-redis client.
//   - Many locks (scenario c): the reentrant lock's acquisitions/s at
//     least the best go-redis peer's (redsync's, redislock's); each relock
//     kind's client CPU per acquisition at most redislock's (tuned), its
//     Redis CPU at most 1.1 × Redisson's RLock scripts'. These are
//     medians of ManyRounds rounds in which the kinds take turns
//     (mergeRounds).
//   - The fair lock: no FIFO inversion in any contended cell.
//   - The semaphore: never more holders than its permits, in any cell;
//     with 1 permit and 16 workers, Redis CPU per acquisition at most
//     1.5 × the reentrant lock's (W=16, 0 µs), at most 4 commands per
//     acquisition, and acquisitions/s at least 0.8 × the lock's.
//   - The latch: at most 3 commands per awaiting client in every round,
//     besides the clients' one-time set-up, and a wake-up p50 at most
//     2 ms.
//   - Against a Redis that hangs, every blocking call of every relock
//     primitive returns at most 50 ms past its context's deadline, with
//     an error matching context.DeadlineExceeded; and so does every
//     client's Shutdown.
//   - How cost grows on one Client (scenario z): no lease lost at any
//     size; a held lease's client memory at most leaseBytesBefore and a
//     waiter's at most waiterBytesBefore (the figures of the code before
//     the watchdog's batches, on this machine), in the rows large enough
//     that the Client's fixed cost does not show; a million distinct names
//     leave no key and at most scaleNamesHeapMiB of heap; sustained
//     give-ups on one hot name leave records whose last sample is at
//     most 1.2 × their first (plus churnSlack entries), and none
//     ScaleChurnSettle after the churn.
//   - An acquire attempt cut off from its caller (its reply lost) that
//     runs on the server after the caller gave up: every relock lock
//     free again, to a fresh client's TryLock, at most 100 ms after it
//     ran, in every run (scenario t); before relock refused such
//     attempts, the lock stayed taken for the whole lease (30 s).
func (r *report) targets() []target {
	var out []target
	// W=16, 0 µs: throughput against the best peer's.
	const headW = 16
	if best := r.bestPeer(headW, 0, func(c *cellResult) float64 { return c.PerSec }, true); best != nil {
		peer := fmt.Sprintf("best peer %s %s", best.Kind, grouped(best.PerSec))
		if c := r.cell("relock fair", headW, headW, 0); c != nil {
			t := target{Goal: fmt.Sprintf("relock fair, W=%d, 0 µs: acq/s ≥ best peer's, 0 FIFO inversions, max wait ≤ best peer's max wait / 10", headW)}
			if c.Err != "" {
				t.Measured = "failed: " + c.Err
			} else {
				t.Measured = fmt.Sprintf("fair %s vs %s acq/s (%.2f×); %d FIFO inversions; max wait %s vs %s",
					grouped(c.PerSec), peer, c.PerSec/best.PerSec, c.Inversions, us(c.MaxWaitUs), us(best.MaxWaitUs))
				t.Met = c.PerSec >= best.PerSec && c.Inversions == 0 && c.MaxWaitUs <= best.MaxWaitUs/10
			}
			out = append(out, t)
		}
		if c := r.cell("relock reentrant", headW, headW, 0); c != nil {
			t := target{Goal: fmt.Sprintf("relock reentrant, W=%d, 0 µs: acq/s ≥ 0.8 × best peer's", headW)}
			if c.Err != "" {
				t.Measured = "failed: " + c.Err
			} else {
				t.Measured = fmt.Sprintf("reentrant %s vs %s acq/s (%.2f×)", grouped(c.PerSec), peer, c.PerSec/best.PerSec)
				t.Met = c.PerSec >= 0.8*best.PerSec
			}
			out = append(out, t)
		}
	}

	// Redis CPU per contended acquisition against the leanest peer's and,
	// for the fair lock, the bare FIFO hand-off's.
	for _, w := range r.Meta.Config.Workers {
		if w != 4 && w != 16 && w != 64 {
			continue
		}
		lean := r.bestPeer(w, 0, func(c *cellResult) float64 { return c.RedisCPUPerAcq }, false)
		if lean == nil {
			continue
		}
		if c := r.cell("relock fair", w, w, 0); c != nil {
			t := target{Goal: fmt.Sprintf("relock fair, W=%d, 0 µs: Redis CPU/acquisition ≤ 1.25 × leanest peer's and ≤ 1.3 × the bare FIFO hand-off's", w)}
			bare := r.layoutCell(bareHandoffID, w)
			switch {
			case c.Err != "":
				t.Measured = "failed: " + c.Err
			case bare == nil:
				t.Measured = "no bare FIFO hand-off cell in this run (scenario x)"
			default:
				t.Measured = fmt.Sprintf("fair %s vs leanest peer %s %s (%.2f×), bare FIFO hand-off %s (%.2f×)",
					cpuUs(c.RedisCPUPerAcq), lean.Kind, cpuUs(lean.RedisCPUPerAcq), c.RedisCPUPerAcq/lean.RedisCPUPerAcq,
					cpuUs(bare.RedisCPUPerAcq), c.RedisCPUPerAcq/bare.RedisCPUPerAcq)
				t.Met = c.Acquisitions > 0 && c.RedisCPUPerAcq <= 1.25*lean.RedisCPUPerAcq && c.RedisCPUPerAcq <= 1.3*bare.RedisCPUPerAcq
			}
			out = append(out, t)
		}
		if c, own := r.cell("relock fair", w, w, 0), r.layoutCell(scriptsHandoffID, w); c != nil && c.Err == "" && own != nil && own.RedisCPUPerAcq > 0 {
			out = append(out, target{
				Goal:     fmt.Sprintf("relock fair, W=%d, 0 µs: Redis CPU/acquisition ≤ 1.1 × its own scripts' on a bare client", w),
				Measured: fmt.Sprintf("fair %s vs its scripts, bare client %s (%.2f×)", cpuUs(c.RedisCPUPerAcq), cpuUs(own.RedisCPUPerAcq), c.RedisCPUPerAcq/own.RedisCPUPerAcq),
				Met:      c.Acquisitions > 0 && c.RedisCPUPerAcq <= 1.1*own.RedisCPUPerAcq,
			})
		}
		if c := r.cell("relock reentrant", w, w, 0); c != nil {
			t := target{Goal: fmt.Sprintf("relock reentrant, W=%d, 0 µs: Redis CPU/acquisition ≤ 1.5 × leanest peer's", w)}
			if c.Err != "" {
				t.Measured = "failed: " + c.Err
			} else {
				t.Measured = fmt.Sprintf("reentrant %s vs leanest peer %s %s (%.2f×)",
					cpuUs(c.RedisCPUPerAcq), lean.Kind, cpuUs(lean.RedisCPUPerAcq), c.RedisCPUPerAcq/lean.RedisCPUPerAcq)
				t.Met = c.Acquisitions > 0 && c.RedisCPUPerAcq <= 1.5*lean.RedisCPUPerAcq
			}
			out = append(out, t)
		}
	}

	var lockRef, uncRef *uncontendedResult
	for i := range r.Uncontended {
		switch x := &r.Uncontended[i]; {
		case x.Err != "":
		case x.Kind == "redislock tuned":
			lockRef = x
		case x.Kind == rlockRefID:
			uncRef = x
		}
	}
	// Runs before the cost rounds measured one loop per kind.
	var medians string
	if n := r.Meta.Config.UncontendedRounds; n > 0 {
		medians = fmt.Sprintf(" (medians of %d interleaved rounds)", n)
	}
	for _, x := range r.Uncontended {
		if !isRelock(x.Kind) || x.Err != "" {
			continue
		}
		out = append(out, target{
			Goal:     x.Kind + ": uncontended p50 ≤ 1.15 × 2 PING round trips",
			Measured: fmt.Sprintf("%s vs %s: %.2f× (two empty EVALSHA: %.2f×)", us(x.LockUnlock.P50), us(x.Ping.P50), x.Ratio, x.FloorRatio),
			Met:      x.Ratio <= 1.15,
		})
		if lockRef != nil {
			out = append(out, target{
				Goal: x.Kind + ": uncontended allocations per Lock+Unlock ≤ redislock tuned's + 4, client CPU ≤ redislock tuned's" + medians,
				Measured: fmt.Sprintf("%s vs %s allocations; client CPU %s vs %s (%.2f×)", ranged(x.AllocsPerOp, x.AllocsRange, num), ranged(lockRef.AllocsPerOp, lockRef.AllocsRange, num),
					ranged(x.ClientCPUPerOp, x.ClientCPURange, cpuUs), ranged(lockRef.ClientCPUPerOp, lockRef.ClientCPURange, cpuUs), x.ClientCPUPerOp/lockRef.ClientCPUPerOp),
				Met: x.AllocsPerOp <= lockRef.AllocsPerOp+4 && x.ClientCPUPerOp <= lockRef.ClientCPUPerOp,
			})
		}
		if uncRef != nil && uncRef.RedisCPUPerOp > 0 {
			out = append(out, target{
				Goal:     x.Kind + ": uncontended Redis CPU per Lock+Unlock ≤ 1.1 × Redisson's RLock scripts'" + medians,
				Measured: fmt.Sprintf("%s vs %s (%.2f×)", ranged(x.RedisCPUPerOp, x.RedisCPURange, cpuUs), ranged(uncRef.RedisCPUPerOp, uncRef.RedisCPURange, cpuUs), x.RedisCPUPerOp/uncRef.RedisCPUPerOp),
				Met:      x.RedisCPUPerOp <= 1.1*uncRef.RedisCPUPerOp,
			})
		}
	}
	out = append(out, r.manyTargets()...)
	out = append(out, r.oneClientTargets()...)

	// The fair lock: no inversion in any contended cell.
	var fairCells []*cellResult
	for i := range r.Contended {
		if c := &r.Contended[i]; c.Kind == "relock fair" {
			fairCells = append(fairCells, c)
		}
	}
	if len(fairCells) > 0 {
		out = append(out, noneTarget("relock fair: 0 FIFO inversions in every contended cell, shared clients included", "inversions", "contended cells",
			fairCells, func(c *cellResult) int { return c.Inversions }))
	}
	// The semaphore: no more holders than permits in any cell, and one
	// permit among 16 workers at the reentrant lock's cost.
	var semCells []*cellResult
	for i := range r.Semaphore {
		semCells = append(semCells, &r.Semaphore[i])
	}
	if len(semCells) > 0 {
		out = append(out, noneTarget("relock semaphore: never more holders than its N permits, in every cell", "grants above N", "cells",
			semCells, func(c *cellResult) int { return c.Violations }))
	}
	if t, ok := r.semaphoreTarget(16); ok {
		out = append(out, t)
	}
	out = append(out, r.latchTargets()...)
	if l := r.Late; l != nil && len(l.Rows) > 0 {
		out = append(out, l.target())
	}
	if z := r.Scale; z != nil {
		out = append(out, z.targets()...)
	}
	if o := r.Overshoot; o != nil && len(o.Calls) > 0 {
		out = append(out, o.target())
		if o.Clients > 0 {
			out = append(out, target{
				Goal: fmt.Sprintf("relock, against a Redis that hangs: Client.Shutdown(ctx) returns ≤ %d ms past ctx's deadline (%d ms)", o.TargetMs, o.ShutdownContextMs),
				Measured: fmt.Sprintf("longest %s; %d of %d clients' Shutdowns still running %d ms past it (cut short by closing their connections)",
					ms(o.ShutdownMs*1e3), o.LateShutdowns, o.Clients, o.TargetMs),
				Met: o.LateShutdowns == 0,
			})
		}
	}
	return out
}

// manyTargets checks scenario (c): the reentrant lock's acquisitions/s
// against the best go-redis peer's, and each relock kind's client CPU
// against redislock's (tuned) and Redis CPU against Redisson's RLock
// scripts', all per acquisition.
func (r *report) manyTargets() []target {
	var out []target
	var best, lockRef, ref *cellResult
	for i := range r.Many {
		c := &r.Many[i]
		if c.Err != "" || c.Acquisitions == 0 {
			continue
		}
		switch {
		case c.Kind == rlockRefID:
			ref = c
		case strings.HasPrefix(c.Kind, "redsync") || strings.HasPrefix(c.Kind, "redislock"):
			if best == nil || c.PerSec > best.PerSec {
				best = c
			}
			if c.Kind == "redislock tuned" {
				lockRef = c
			}
		}
	}
	for i := range r.Many {
		c := &r.Many[i]
		if !isRelock(c.Kind) {
			continue
		}
		if c.Err != "" {
			out = append(out, target{Goal: c.Kind + ", many locks", Measured: "failed: " + c.Err})
			continue
		}
		if best != nil && c.Kind == "relock reentrant" {
			out = append(out, target{
				Goal:     fmt.Sprintf("%s, many locks (%d names, W=%d): acq/s ≥ best go-redis peer's", c.Kind, c.Names, c.Workers),
				Measured: fmt.Sprintf("%s vs %s %s acq/s (%.2f×)", ranged(c.PerSec, c.PerSecRange, grouped), best.Kind, ranged(best.PerSec, best.PerSecRange, grouped), c.PerSec/best.PerSec),
				Met:      c.PerSec >= best.PerSec,
			})
		}
		if lockRef != nil {
			out = append(out, target{
				Goal: fmt.Sprintf("%s, many locks: client CPU/acquisition ≤ redislock tuned's", c.Kind),
				Measured: fmt.Sprintf("%s vs %s (%.2f×); allocations %s vs %s", ranged(c.ClientCPUPerAcq, c.ClientCPURange, cpuUs), ranged(lockRef.ClientCPUPerAcq, lockRef.ClientCPURange, cpuUs),
					c.ClientCPUPerAcq/lockRef.ClientCPUPerAcq, num(c.AllocsPerAcq), num(lockRef.AllocsPerAcq)),
				Met: c.ClientCPUPerAcq <= lockRef.ClientCPUPerAcq,
			})
		}
		if ref != nil {
			out = append(out, target{
				Goal: fmt.Sprintf("%s, many locks: acq/s ≥ 0.95 × and client CPU/acquisition ≤ 1.05 × Redisson's RLock scripts' on a bare client", c.Kind),
				Measured: fmt.Sprintf("%s vs %s acq/s (%.2f×); client CPU %s vs %s (%.2f×)",
					ranged(c.PerSec, c.PerSecRange, grouped), ranged(ref.PerSec, ref.PerSecRange, grouped), c.PerSec/ref.PerSec,
					ranged(c.ClientCPUPerAcq, c.ClientCPURange, cpuUs), ranged(ref.ClientCPUPerAcq, ref.ClientCPURange, cpuUs), c.ClientCPUPerAcq/ref.ClientCPUPerAcq),
				Met: c.PerSec >= 0.95*ref.PerSec && c.ClientCPUPerAcq <= 1.05*ref.ClientCPUPerAcq,
			})
			out = append(out, target{
				Goal:     fmt.Sprintf("%s, many locks: Redis CPU/acquisition ≤ 1.1 × Redisson's RLock scripts'", c.Kind),
				Measured: fmt.Sprintf("%s vs %s (%.2f×)", ranged(c.RedisCPUPerAcq, c.RedisCPURange, cpuUs), ranged(ref.RedisCPUPerAcq, ref.RedisCPURange, cpuUs), c.RedisCPUPerAcq/ref.RedisCPUPerAcq),
				Met:      c.RedisCPUPerAcq <= 1.1*ref.RedisCPUPerAcq,
			})
		}
	}
	return out
}

// semaphoreTarget checks the semaphore of 1 permit among w workers, each
// on its own client, against the reentrant lock's cell of w workers and
// 0 µs in the same run; ok is false when the run has either not.
func (r *report) semaphoreTarget(w int) (target, bool) {
	var sem *cellResult
	for i := range r.Semaphore {
		if c := &r.Semaphore[i]; c.Permits == 1 && c.Workers == w && c.clients() == w {
			sem = c
		}
	}
	lock, where := r.lockBeside(w), "run right before and after it, mean of the two"
	if lock == nil {
		lock, where = r.cell("relock reentrant", w, w, 0), "scenario (b)"
	}
	if sem == nil || lock == nil {
		return target{}, false
	}
	t := target{Goal: fmt.Sprintf("relock semaphore, N=1, W=%d: Redis CPU/acquisition ≤ 1.5 × relock reentrant's (W=%d, 0 µs, %s), ≤ 4 commands/acquisition, acq/s ≥ 0.8 × the lock's", w, w, where)}
	switch {
	case sem.Err != "":
		t.Measured = "failed: " + sem.Err
	case lock.Err != "" || lock.Acquisitions == 0:
		t.Measured = "the reentrant lock's cell failed"
	default:
		t.Measured = fmt.Sprintf("Redis CPU %s vs %s (%.2f×); %s commands/acquisition; %s vs %s acq/s (%.2f×)",
			cpuUs(sem.RedisCPUPerAcq), cpuUs(lock.RedisCPUPerAcq), sem.RedisCPUPerAcq/lock.RedisCPUPerAcq,
			num(sem.CmdsPerAcq), grouped(sem.PerSec), grouped(lock.PerSec), sem.PerSec/lock.PerSec)
		t.Met = sem.Acquisitions > 0 && sem.RedisCPUPerAcq <= 1.5*lock.RedisCPUPerAcq && sem.CmdsPerAcq <= 4 && sem.PerSec >= 0.8*lock.PerSec
	}
	return t, true
}

// lockBeside returns the reentrant lock's cells of w workers run beside
// the one-permit semaphore cell as one: acquisitions/s and Redis CPU per
// acquisition the mean of the two. Nil unless both ran and neither
// failed.
func (r *report) lockBeside(w int) *cellResult {
	var cells []cellResult
	for _, c := range r.SemaphoreLock {
		if c.Workers == w {
			cells = append(cells, c)
		}
	}
	if len(cells) != 2 || cells[0].Err != "" || cells[1].Err != "" || cells[0].Acquisitions == 0 || cells[1].Acquisitions == 0 {
		return nil
	}
	m := cells[0]
	m.PerSec = (cells[0].PerSec + cells[1].PerSec) / 2
	m.RedisCPUPerAcq = (cells[0].RedisCPUPerAcq + cells[1].RedisCPUPerAcq) / 2
	return &m
}

// latchTargets checks scenario (l): the commands of every round but the
// clients' one-time set-up at most 3 per awaiting client, and the wake-up
// p50 at most 2 ms.
func (r *report) latchTargets() []target {
	var out []target
	for _, x := range r.Latch {
		cmds := target{Goal: fmt.Sprintf("%s, %d awaiters on %d clients: ≤ 3 commands per client per round (≤ %d), the clients' one-time set-up aside", x.Kind, x.Awaiters, x.Clients, 3*x.Clients)}
		wake := target{Goal: fmt.Sprintf("%s, %d awaiters on %d clients: wake-up p50 ≤ 2 ms", x.Kind, x.Awaiters, x.Clients)}
		if x.Err != "" {
			cmds.Measured, wake.Measured = "failed: "+x.Err, "failed: "+x.Err
			out = append(out, cmds, wake)
			continue
		}
		var rounds []string
		worst := int64(-1)
		for i, n := range x.CmdsPerRound {
			if i < len(x.SetupPerRound) {
				n -= x.SetupPerRound[i]
			}
			worst = max(worst, n)
			rounds = append(rounds, fmt.Sprint(n))
		}
		cmds.Measured = fmt.Sprintf("commands per round without set-up: %s (set-up: %v)", strings.Join(rounds, ", "), x.SetupPerRound)
		cmds.Met = worst >= 0 && worst <= int64(3*x.Clients) && len(x.SetupPerRound) == len(x.CmdsPerRound)
		wake.Measured = fmt.Sprintf("wake p50 %s, p99 %s", us(x.Wake.P50), us(x.Wake.P99))
		wake.Met = x.Wake.P50 <= 2000
		out = append(out, cmds, wake)
	}
	return out
}

// layoutCell returns scenario (x)'s cell of kindID at w workers that ran
// and acquired, nil if none.
func (r *report) layoutCell(kindID string, w int) *cellResult {
	for i := range r.Layout {
		if c := &r.Layout[i]; c.Kind == kindID && c.Workers == w && c.Err == "" && c.Acquisitions > 0 {
			return c
		}
	}
	return nil
}

// target checks scenario (o): every call of every primitive back within
// TargetMs of its deadline, with the deadline's error. The measured text
// names the call with the largest overshoot, the calls that missed and
// those whose set-up failed.
func (o *overshootResult) target() target {
	t := target{Goal: fmt.Sprintf("relock, against a Redis that hangs: every blocking call returns ≤ %d ms past its context's deadline (%d ms), with an error matching context.DeadlineExceeded", o.TargetMs, o.DeadlineMs)}
	var worst *overshootRow
	var missed, failed []string
	other := 0
	for i := range o.Calls {
		x := &o.Calls[i]
		name := x.Primitive + " " + x.Call
		switch {
		case x.Err != "":
			failed = append(failed, name)
			continue
		case !x.Met:
			missed = append(missed, name)
		}
		other += x.Other
		if worst == nil || x.Overshoot.Max > worst.Overshoot.Max {
			worst = x
		}
	}
	if worst != nil {
		t.Measured = fmt.Sprintf("max overshoot %s (%s %s); %d errors not matching DeadlineExceeded; %d of %d calls missed",
			ms(worst.Overshoot.Max), worst.Primitive, worst.Call, other, len(missed), len(o.Calls)-len(failed))
	}
	if len(missed) > 0 {
		t.Measured += ": " + strings.Join(missed, ", ")
	}
	if len(failed) > 0 {
		t.Measured += "; failed to set up: " + strings.Join(failed, ", ")
	}
	t.Met = worst != nil && len(missed) == 0 && len(failed) == 0
	return t
}

// noneTarget checks that none of cells has any of what, which value
// counts: the measured text gives the total over the cells that ran
// (which are called where), the cells with any, and those that failed.
func noneTarget(goal, what, where string, cells []*cellResult, value func(*cellResult) int) target {
	var n int
	var with, failed []string
	for _, c := range cells {
		label := fmt.Sprintf("%s/%d µs", shapeLabel(c.Workers, c.clients()), c.CriticalUs)
		if c.Permits > 0 {
			label = fmt.Sprintf("N=%d/%s", c.Permits, shapeLabel(c.Workers, c.clients()))
		}
		v := value(c)
		switch {
		case v > 0:
			with = append(with, fmt.Sprintf("%s: %d", label, v))
		case c.Err != "":
			failed = append(failed, label)
		}
		n += v
	}
	m := fmt.Sprintf("%d %s in %d %s", n, what, len(cells)-len(failed), where)
	if len(with) > 0 {
		m += ": " + strings.Join(with, "; ")
	}
	if len(failed) > 0 {
		m += "; failed: " + strings.Join(failed, ", ")
	}
	return target{Goal: goal, Measured: m, Met: n == 0 && len(failed) == 0}
}

func isRelock(kind string) bool { return strings.HasPrefix(kind, "relock") }

// bestPeer returns the peers' cell of w workers, each on its own client,
// and a cs µs critical section with the highest value (or the lowest,
// unless highest) among those that ran and acquired.
func (r *report) bestPeer(w, cs int, value func(*cellResult) float64, highest bool) *cellResult {
	var best *cellResult
	for _, k := range r.Kinds {
		if isRelock(k.ID) {
			continue
		}
		c := r.cell(k.ID, w, w, cs)
		if c == nil || c.Err != "" || c.Acquisitions == 0 {
			continue
		}
		if best == nil {
			best = c
			continue
		}
		if v, b := value(c), value(best); highest && v > b || !highest && v < b {
			best = c
		}
	}
	return best
}

// grouped renders a rate as a whole number with its thousands apart.
func grouped(v float64) string {
	if v < 100 {
		return num(v)
	}
	s := fmt.Sprint(int64(math.Round(v)))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + " " + s[i:]
	}
	return s
}

// cpuUs renders a CPU time per acquisition, to the tenth of a µs it is
// recorded with.
func cpuUs(v float64) string {
	if v >= 1000 {
		return us(v)
	}
	return fmt.Sprintf("%.1f µs", v)
}

// oneClientTargets checks scenario (p)'s cell of many names: relock's
// locks on one shared client against rueidislock's best configuration
// and redislock's (tuned) on one shared client each.
func (r *report) oneClientTargets() []target {
	names := r.Meta.Config.OneClientNames
	rueidis, redislock := r.bestOneClient("rueidislock", names), r.oneClient("redislock tuned", names)
	var out []target
	for _, kind := range []string{"relock reentrant", "relock fair"} {
		c := r.oneClient(kind, names)
		if c == nil {
			continue
		}
		t := target{Goal: fmt.Sprintf("%s, one client x %d goroutines on %d names: acq/s ≥ rueidislock's best configuration's and ≥ 1.5 × redislock tuned's", kind, c.Workers, names)}
		switch {
		case c.Err != "":
			t.Measured = "failed: " + c.Err
		case rueidis == nil || redislock == nil || redislock.Err != "":
			t.Measured = "no rueidislock or redislock tuned row in this run"
		default:
			t.Measured = fmt.Sprintf("%s vs %s %s (%.2f×) and redislock tuned %s (%.2f×) acq/s",
				ranged(c.PerSec, c.PerSecRange, grouped), rueidis.Kind, ranged(rueidis.PerSec, rueidis.PerSecRange, grouped), c.PerSec/rueidis.PerSec,
				ranged(redislock.PerSec, redislock.PerSecRange, grouped), c.PerSec/redislock.PerSec)
			t.Met = c.PerSec >= rueidis.PerSec && c.PerSec >= 1.5*redislock.PerSec
		}
		out = append(out, t)
	}
	return out
}
