package main

import (
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A dist summarizes a sample of durations, in microseconds.
type dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean_us"`
	P50  float64 `json:"p50_us"`
	P99  float64 `json:"p99_us"`
	Max  float64 `json:"max_us"`
}

// summarize sorts ns in place and summarizes it.
func summarize(ns []int64) dist {
	if len(ns) == 0 {
		return dist{}
	}
	slices.Sort(ns)
	var sum float64
	for _, v := range ns {
		sum += float64(v)
	}
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return dist{
		N:    len(ns),
		Mean: sum / float64(len(ns)) / 1e3,
		P50:  us(quantile(ns, 0.50)),
		P99:  us(quantile(ns, 0.99)),
		Max:  us(ns[len(ns)-1]),
	}
}

// quantile is the nearest-rank quantile of sorted.
func quantile(sorted []int64, q float64) int64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// A span is the lowest and highest of a figure over the rounds whose
// median a result reports.
type span struct {
	Min float64 `json:"min"`
	Max float64 `json:"max"`
}

// medianSpan returns the median of vs (the mean of the middle two when
// their number is even), and their span.
func medianSpan(vs []float64) (float64, span) {
	if len(vs) == 0 {
		return 0, span{}
	}
	s := slices.Sorted(slices.Values(vs))
	m := len(s) / 2
	med := s[m]
	if len(s)%2 == 0 {
		med = round1((s[m-1] + s[m]) / 2)
	}
	return med, span{Min: s[0], Max: s[len(s)-1]}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A clientCost is a reading of what this process has spent: CPU time
// (getrusage), heap allocations (runtime.MemStats) and read and write
// system calls (rwSyscalls). Whatever else runs in the process between a
// measurement's two readings counts too.
type clientCost struct {
	cpu            time.Duration
	mallocs, bytes uint64
	syscalls       int64
}

// costAtStart reads the allocations before the CPU time, and costAtEnd
// after it, so that ReadMemStats, which stops the world, is not counted.
func costAtStart() clientCost {
	m := memStats()
	return clientCost{cpu: cpuTime(), mallocs: m.Mallocs, bytes: m.TotalAlloc, syscalls: rwSyscalls()}
}

func costAtEnd() clientCost {
	calls := rwSyscalls()
	cpu := cpuTime()
	m := memStats()
	return clientCost{cpu: cpu, mallocs: m.Mallocs, bytes: m.TotalAlloc, syscalls: calls}
}

// rwSyscalls is the read and write system calls this process has made
// (syscr + syscw of /proc/self/io: read, write and their vectored and
// socket kin, which is how a client talks to Redis); -1 where the file
// cannot be read.
func rwSyscalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	f := infoFields(string(b))
	r, err1 := strconv.ParseInt(strings.TrimSpace(f["syscr"]), 10, 64)
	w, err2 := strconv.ParseInt(strings.TrimSpace(f["syscw"]), 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return r + w
}

func memStats() runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// per returns the CPU time in µs, the heap allocations (Mallocs) and the
// bytes allocated (TotalAlloc) from start to c, each divided by n.
func (c clientCost) per(start clientCost, n int) (cpuUs, allocs, bytes float64) {
	f := float64(n)
	return round1(float64(c.cpu-start.cpu) / 1e3 / f), round1(float64(c.mallocs-start.mallocs) / f), round1(float64(c.bytes-start.bytes) / f)
}

// round1 rounds to one decimal, round2 to two: JSON and tables show what
// the measurement can tell.
func round1(v float64) float64 { return math.Round(v*10) / 10 }
func round2(v float64) float64 { return math.Round(v*100) / 100 }
