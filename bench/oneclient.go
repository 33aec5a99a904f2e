package main

import (
	"slices"
	"strings"
)

// Scenario p: the shape of a Go service, one client per library shared by
// every goroutine of the process, rather than a client per worker as in
// the other scenarios. Each cell runs every kind once a round, the kinds
// taking turns (as scenario c's), and reports medians (mergeRounds).

// oneClientCells lists scenario p's cells: many goroutines on many names,
// and fewer on one lock.
func oneClientCells(cfg config) []cell {
	return []cell{
		{Scenario: "one-client", W: cfg.OneClientWorkers, Clients: 1, Names: cfg.OneClientNames, Window: cfg.ManyWindow},
		{Scenario: "one-client", W: cfg.OneClientLockWorkers, Clients: 1, Names: 1, Window: cfg.ManyWindow},
	}
}

// oneClientKinds are the kinds of ks that scenario p runs: relock's two
// locks, the reentrant one with pipelining off beside them, and every
// peer but redsync's and redislock's defaults (go-redis's default options
// with retries, which the tuned rows leave out).
func oneClientKinds(ks []kind) []kind {
	var out []kind
	for _, k := range ks {
		if k.Relock && k.ID != "relock reentrant" && k.ID != "relock fair" {
			continue
		}
		if k.ID == "redsync default" || k.ID == "redislock default" {
			continue
		}
		out = append(out, k)
		if k.ID == "relock reentrant" {
			out = append(out, pipeliningOffKind())
		}
	}
	return out
}

// runOneClient runs scenario p.
func (e *env) runOneClient(ks []kind) []cellResult {
	var out []cellResult
	for _, c := range oneClientCells(e.cfg) {
		rounds := make([][]cellResult, len(ks))
		for round := range max(1, e.cfg.OneClientRounds) {
			for j := range ks {
				i := (round + j) % len(ks)
				k := ks[i]
				res, err := e.runCell(k, c)
				res.Err = errText(err)
				rounds[i] = append(rounds[i], res)
				e.progress("one client   %-32s %4d names W=%-3d round %d %7.0f acq/s  client CPU/acq %5.1fus  r+w syscalls/acq %5.2f  Redis CPU/acq %5.1fus  conns %3d%s%s",
					k.ID, c.Names, c.W, round+1, res.PerSec, res.ClientCPUPerAcq, res.SyscallsPerAcq, res.RedisCPUPerAcq, res.Connections, res.faults(), errSuffix(err))
			}
		}
		for _, rs := range rounds {
			out = append(out, mergeRounds(rs))
		}
	}
	return out
}

// oneClient returns scenario p's row of kind in the cell of names names,
// nil when the run has none.
func (r *report) oneClient(kind string, names int) *cellResult {
	i := slices.IndexFunc(r.OneClient, func(c cellResult) bool { return c.Kind == kind && c.Names == names })
	if i < 0 {
		return nil
	}
	return &r.OneClient[i]
}

// bestOneClient returns the row with the most acquisitions/s among the
// kinds of lib in scenario p's cell of names names.
func (r *report) bestOneClient(lib string, names int) *cellResult {
	var best *cellResult
	for i := range r.OneClient {
		c := &r.OneClient[i]
		if c.Names == names && c.Err == "" && strings.HasPrefix(c.Kind, lib+" ") && (best == nil || c.PerSec > best.PerSec) {
			best = c
		}
	}
	return best
}
