package main

import (
	"fmt"
	"strings"
)

// targets checks this run against the goals of issue 6. They are
// measured, not asserted: a missed one is reported, not failed.
func (r *report) targets() []target {
	var out []target
	for _, x := range r.Uncontended {
		if !strings.HasPrefix(x.Kind, "relock") || x.Err != "" {
			continue
		}
		out = append(out, target{
			Goal:     x.Kind + ": uncontended p50 ≤ 1.15 × 2 PING round trips",
			Measured: fmt.Sprintf("%s vs %s: %.2f× (two empty EVALSHA: %.2f×)", us(x.LockUnlock.P50), us(x.Ping.P50), x.Ratio, x.FloorRatio),
			Met:      x.Ratio <= 1.15,
		})
	}
	if len(r.Contended) == 0 {
		return out
	}
	cfg := r.Meta.Config

	// Commands per acquisition of the contended reentrant lock.
	var parts []string
	met, any := true, false
	for _, cs := range cfg.CriticalUs {
		for _, w := range cfg.Workers {
			if c := r.cell("relock reentrant", w, cs); c != nil && c.Err == "" {
				parts = append(parts, fmt.Sprintf("W=%d/%dµs %s", w, cs, num(c.CmdsPerAcq)))
				met = met && c.CmdsPerAcq <= 3
				any = true
			}
		}
	}
	if any {
		out = append(out, target{Goal: "relock reentrant, contended: ≤ 3 Redis commands per acquisition", Measured: strings.Join(parts, "; "), Met: met})
	}

	// Fair lock: no inversion, max wait under 10 × p50.
	parts, met, any = nil, true, false
	inv := 0
	for _, cs := range cfg.CriticalUs {
		for _, w := range cfg.Workers {
			if c := r.cell("relock fair", w, cs); c != nil && c.Err == "" {
				inv += c.Inversions
				parts = append(parts, fmt.Sprintf("W=%d/%dµs %s", w, cs, ratio(c.MaxWaitUs, c.Wait.P50)))
				met = met && c.MaxWaitUs < 10*c.Wait.P50
				any = true
			}
		}
	}
	if any {
		out = append(out,
			target{Goal: "relock fair: zero FIFO inversions", Measured: fmt.Sprintf("%d inversions in all contended cells", inv), Met: inv == 0},
			target{Goal: "relock fair: max wait < 10 × p50 wait", Measured: "max/p50: " + strings.Join(parts, "; "), Met: met})
	}

	// Throughput at W=16 at least the best peer's, max wait a tenth of it.
	for _, cs := range cfg.CriticalUs {
		var best *cellResult
		for _, k := range r.Kinds {
			if strings.HasPrefix(k.ID, "relock") {
				continue
			}
			if c := r.cell(k.ID, 16, cs); c != nil && c.Err == "" && (best == nil || c.PerSec > best.PerSec) {
				best = c
			}
		}
		if best == nil {
			continue
		}
		for _, id := range []string{"relock reentrant", "relock fair"} {
			c := r.cell(id, 16, cs)
			if c == nil || c.Err != "" {
				continue
			}
			out = append(out, target{
				Goal: fmt.Sprintf("%s, W=16, %d µs: acq/s ≥ best peer's, max wait ≤ best peer's / 10", id, cs),
				Measured: fmt.Sprintf("%s acq/s, max wait %s; best peer %s: %s acq/s, max wait %s",
					num(c.PerSec), us(c.MaxWaitUs), best.Kind, num(best.PerSec), us(best.MaxWaitUs)),
				Met: c.PerSec >= best.PerSec && c.MaxWaitUs <= best.MaxWaitUs/10,
			})
		}
	}
	return out
}
