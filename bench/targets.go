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
//     run has; one client per worker, 0 µs): the fair lock's at most the
//     leanest peer's (the lowest in that cell), the reentrant lock's at
//     most 1.5 × it.
//   - Uncontended: each relock kind's Lock+Unlock p50 at most 1.15 × two
//     PING round trips.
//   - The fair lock: no FIFO inversion in any contended cell, the shared
//     clients' included.
//   - The semaphore: never more holders than its permits, in any cell.
//   - Against a Redis that hangs, every blocking call of every relock
//     primitive returns at most 50 ms past its context's deadline, with
//     an error matching context.DeadlineExceeded; and so does every
//     client's Shutdown.
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

	// Redis CPU per contended acquisition against the leanest peer's.
	for _, w := range r.Meta.Config.Workers {
		if w != 4 && w != 16 && w != 64 {
			continue
		}
		lean := r.bestPeer(w, 0, func(c *cellResult) float64 { return c.RedisCPUPerAcq }, false)
		if lean == nil {
			continue
		}
		for _, g := range []struct {
			id     string
			factor float64
		}{{"relock fair", 1}, {"relock reentrant", 1.5}} {
			c := r.cell(g.id, w, w, 0)
			if c == nil {
				continue
			}
			t := target{Goal: fmt.Sprintf("%s, W=%d, 0 µs: Redis CPU/acquisition ≤ leanest peer's", g.id, w)}
			if g.factor != 1 {
				t.Goal = fmt.Sprintf("%s, W=%d, 0 µs: Redis CPU/acquisition ≤ %.1f × leanest peer's", g.id, w, g.factor)
			}
			if c.Err != "" {
				t.Measured = "failed: " + c.Err
			} else {
				t.Measured = fmt.Sprintf("%s %s vs leanest peer %s %s (%.2f×)",
					strings.TrimPrefix(g.id, "relock "), cpuUs(c.RedisCPUPerAcq), lean.Kind, cpuUs(lean.RedisCPUPerAcq), c.RedisCPUPerAcq/lean.RedisCPUPerAcq)
				t.Met = c.Acquisitions > 0 && c.RedisCPUPerAcq <= g.factor*lean.RedisCPUPerAcq
				if g.factor == 1 {
					t.Measured += r.references(w, lean)
				}
			}
			out = append(out, t)
		}
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
	}

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
	// The semaphore: no more holders than permits in any cell.
	var semCells []*cellResult
	for i := range r.Semaphore {
		semCells = append(semCells, &r.Semaphore[i])
	}
	if len(semCells) > 0 {
		out = append(out, noneTarget("relock semaphore: never more holders than its N permits, in every cell", "grants above N", "cells",
			semCells, func(c *cellResult) int { return c.Violations }))
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

// references gives scenario (x)'s kinds' Redis CPU per acquisition at w
// workers next to lean's, for a target's measured text: "" without them.
func (r *report) references(w int, lean *cellResult) string {
	var parts []string
	for _, c := range r.Layout {
		if c.Workers == w && c.Err == "" && c.Acquisitions > 0 {
			parts = append(parts, fmt.Sprintf("%s %s (%.2f×)", c.Kind, cpuUs(c.RedisCPUPerAcq), c.RedisCPUPerAcq/lean.RedisCPUPerAcq))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, ", ")
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
