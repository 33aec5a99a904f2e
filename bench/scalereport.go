package main

import (
	"fmt"
	"strings"
	"time"
)

// The figures of the code before the watchdog renewed in batches,
// measured by scenario (z) on this machine (2 cores, 2026-12-02): a held
// lease's client memory (2.5 KiB at 10k leases, 2.8 KiB at 100k, 2.4
// KiB at 1M; below 10k the Client's fixed cost shows: 4.9 KiB at 1k)
// and a waiter's, its goroutine's stack included (14 KiB at 1k, 12 KiB
// at 10k). The targets keep them from growing, for the rows of at least
// scaleMemoryRows.
const (
	leaseBytesBefore  = 2900
	waiterBytesBefore = 14 << 10
	scaleMemoryRows   = 1000
)

// scaleNamesHeapMiB bounds the client's heap after a million distinct
// names, each locked once: what it keeps must not grow with names ever
// used (6.1 MiB measured, go-redis's pools included).
const scaleNamesHeapMiB = 8

// churnSlack is the entries a churn record's last sample may have past
// 1.2 × its first: the waiters and queue of the moment, a few at most.
const churnSlack = 64

// errs lists every row's error.
func (z *scaleResult) errs() []string {
	var out []string
	for _, x := range z.Names {
		out = append(out, x.Err)
	}
	for _, x := range z.Leases {
		out = append(out, x.Err)
	}
	for _, x := range z.Waiters {
		out = append(out, x.Err)
	}
	for _, x := range z.Churn {
		out = append(out, x.Err)
	}
	return out
}

// targets checks scenario (z) (see report.targets).
func (z *scaleResult) targets() []target {
	var out []target
	for _, x := range z.Names {
		t := target{Goal: fmt.Sprintf("%s, %d distinct names locked once through one Client: no key left, client heap after ≤ %d MiB", x.Kind, x.Names, scaleNamesHeapMiB)}
		if x.Err != "" {
			t.Measured = "failed: " + x.Err
		} else {
			t.Measured = fmt.Sprintf("%d keys left, heap %.1f MiB, %d goroutines", x.KeysLeft, x.HeapMiB, x.Goroutines)
			t.Met = x.KeysLeft == 0 && x.HeapMiB <= scaleNamesHeapMiB
		}
		out = append(out, t)
	}
	for _, x := range z.Leases {
		memory := x.Leases > scaleMemoryRows
		goal := fmt.Sprintf("relock, %d leases held on one Client, WatchdogTimeout %s: 0 leases lost", x.Leases, (time.Duration(x.WatchdogMs) * time.Millisecond).String())
		if memory {
			goal += ", client memory ≤ " + bytesStr(leaseBytesBefore) + " a lease"
		}
		t := target{Goal: goal}
		if x.Err != "" {
			t.Measured = "failed: " + x.Err
		} else {
			t.Measured = fmt.Sprintf("%d lost over %.0fs; %s a lease; batch p99 %s, largest %d", x.Lost, x.WindowSeconds, bytesStr(x.BytesPerLease), us(x.BatchTime.P99), x.BatchMax)
			t.Met = x.Lost == 0 && (!memory || x.BytesPerLease <= leaseBytesBefore)
		}
		out = append(out, t)
	}
	for _, x := range z.Waiters {
		memory := x.Waiters >= scaleMemoryRows
		goal := fmt.Sprintf("relock, %d waiters on one Client: every one woken", x.Waiters)
		if memory {
			goal += ", client memory ≤ " + bytesStr(waiterBytesBefore) + " a waiter"
		}
		t := target{Goal: goal}
		if x.Err != "" {
			t.Measured = "failed: " + x.Err
		} else {
			t.Measured = fmt.Sprintf("%d woken, wake p99 %s; %s a waiter; %.1f commands/s while waiting", x.Woken, us(x.Wake.P99), bytesStr(x.BytesPerWaiter), x.CmdsPerSec)
			t.Met = x.Woken == x.Waiters && (!memory || x.BytesPerWaiter <= waiterBytesBefore)
		}
		out = append(out, t)
	}
	for _, x := range z.Churn {
		t := target{Goal: x.Kind + ": give-ups sustained on one hot name leave records flat (last sample ≤ 1.2 × first + " + fmt.Sprint(churnSlack) + " entries) and none after their bound"}
		switch {
		case x.Err != "":
			t.Measured = "failed: " + x.Err
		case len(x.Samples) == 0:
			t.Measured = "no sample"
		default:
			first, last := x.Samples[0], x.Samples[len(x.Samples)-1]
			t.Measured = fmt.Sprintf("%d entries at %.0fs, %d at %.0fs; %d keys %.0fs after the churn", first.Entries, first.Seconds, last.Entries, last.Seconds, x.After.Keys, x.After.Seconds)
			t.Met = float64(last.Entries) <= 1.2*float64(first.Entries)+churnSlack && x.After.Keys == 0
		}
		out = append(out, t)
	}
	return out
}

// section writes scenario (z)'s tables.
func (z *scaleResult) section(b *strings.Builder, cfg config) {
	t := table{b}
	b.WriteString("\n## (z) How cost grows on one Client\n\n")
	b.WriteString("**Names**: distinct names, each locked and unlocked once through one Client from 64 goroutines; what is left after: the Client's live heap, its goroutines, the keys in Redis.\n\n")
	t.header(1, "lock", "names", "seconds", "client heap after", "goroutines", "keys left")
	for _, x := range z.Names {
		if x.Err != "" {
			t.row(x.Kind, fmt.Sprint(x.Names), "error: "+x.Err)
			continue
		}
		t.row(x.Kind, fmt.Sprint(x.Names), fmt.Sprintf("%.1f", x.Seconds), fmt.Sprintf("%.1f MiB", x.HeapMiB), fmt.Sprint(x.Goroutines), fmt.Sprint(x.KeysLeft))
	}
	fmt.Fprintf(b, "\n**Leases**: reentrant locks held on one Client, renewed by its watchdog, watched for %d renewal intervals (at least %s). "+
		"**batch**: one pipeline of renewals, timed from send to last reply. **lost**: lock contexts ended, and unlocks that failed.\n\n", cfg.ScaleLeaseRounds, cfg.ScaleLeaseMin)
	t.header(0, "leases", "WatchdogTimeout", "lost", "batches", "largest batch", "batch p50", "batch p99", "renewals/s", "Redis CPU", "client CPU", "client memory/lease")
	for _, x := range z.Leases {
		if x.Err != "" {
			t.row(fmt.Sprint(x.Leases), (time.Duration(x.WatchdogMs) * time.Millisecond).String(), "error: "+x.Err)
			continue
		}
		t.row(fmt.Sprint(x.Leases), (time.Duration(x.WatchdogMs) * time.Millisecond).String(), fmt.Sprint(x.Lost), fmt.Sprint(x.Batches), fmt.Sprint(x.BatchMax),
			us(x.BatchTime.P50), us(x.BatchTime.P99), num(x.RenewalsPerS), fmt.Sprintf("%.1f%%", x.RedisCPUPct), fmt.Sprintf("%.1f%%", x.ClientCPUPct), bytesStr(x.BytesPerLease))
	}
	b.WriteString("\n**Waiters**: goroutines of one Client, each waiting on a lock of its own that another Client holds; **wake**: from the lock's Unlock returning to its waiter's Lock returning.\n\n")
	t.header(0, "waiters", "client memory/waiter", "Redis cmds/s while waiting", "woken", "wake p50", "wake p99", "wake max")
	for _, x := range z.Waiters {
		if x.Err != "" {
			t.row(fmt.Sprint(x.Waiters), "error: "+x.Err)
			continue
		}
		t.row(fmt.Sprint(x.Waiters), bytesStr(x.BytesPerWaiter), num(x.CmdsPerSec), fmt.Sprint(x.Woken), us(x.Wake.P50), us(x.Wake.P99), us(x.Wake.Max))
	}
	fmt.Fprintf(b, "\n**Churn**: 4 Clients of 4 goroutines each looping Lock with deadlines of 0-3 ms on one hot name (WatchdogTimeout 2 s), then Unlock, for %s; "+
		"relock's records of the name (give-up record, waiters registry, fair queue and timeouts): entries and MEMORY USAGE, summed, every %s and %s after.\n\n",
		cfg.ScaleChurnFor, cfg.ScaleChurnSample, cfg.ScaleChurnSettle)
	cols := []string{"lock", "calls"}
	if len(z.Churn) > 0 {
		for _, s := range z.Churn[0].Samples {
			cols = append(cols, fmt.Sprintf("%.0f s", s.Seconds))
		}
	}
	t.header(1, append(cols, "after")...)
	for _, x := range z.Churn {
		if x.Err != "" {
			t.row(x.Kind, "error: "+x.Err)
			continue
		}
		row := []string{x.Kind, fmt.Sprint(x.Calls)}
		for _, s := range x.Samples {
			row = append(row, fmt.Sprintf("%d (%s)", s.Entries, bytesStr(float64(s.Bytes))))
		}
		t.row(append(row, fmt.Sprintf("%d keys", x.After.Keys))...)
	}
}
