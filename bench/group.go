package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/multilock"
	"github.com/relock-go/relock/reentrant"
)

// Scenario (g): a set of groupValues values locked as one, by a
// grouplock.Mutex (one hash, one script call) and by a MultiLock of one
// reentrant.Mutex per value (one script call per member), over the same
// values: one worker alone, then groupWorkers workers whose sets overlap
// their neighbours' by half.
const (
	groupValues  = 8
	groupWorkers = 4
	groupID      = "relock grouplock"
	multiID      = "relock multilock"
)

// groupRow is one kind in one shape.
type groupRow struct {
	Kind    string `json:"kind"`
	Workers int    `json:"workers"`
	// Acquires and PerSec count Lock calls that returned the set held.
	Acquires int     `json:"acquires"`
	PerSec   float64 `json:"acquires_per_s"`
	// Cycle is one Lock+Unlock, from the Lock call to Unlock's return.
	Cycle dist `json:"lock_unlock"`
	// CmdsPerAcq: commands clients sent per acquisition (an EVALSHA
	// once); AllCmdsPerAcq: every command the server ran, in Lua too.
	CmdsPerAcq     float64 `json:"cmds_per_acquire"`
	AllCmdsPerAcq  float64 `json:"all_cmds_per_acquire"`
	RedisCPUPerAcq float64 `json:"redis_cpu_us_per_acquire"`
	// Violations counts values found held by two workers at once: must
	// be 0.
	Violations int    `json:"violations"`
	Err        string `json:"error,omitempty"`
}

type groupResult struct {
	Values int        `json:"values_per_set"`
	Rows   []groupRow `json:"rows"`
}

// groupSteps is how many progress lines scenario (g) prints.
const groupSteps = 4

// runGroup runs scenario (g): each shape, both kinds, one after another.
func (e *env) runGroup() *groupResult {
	res := &groupResult{Values: groupValues}
	for _, w := range []int{1, groupWorkers} {
		for _, id := range []string{groupID, multiID} {
			row, err := e.groupCell(id, w)
			row.Err = errText(err)
			res.Rows = append(res.Rows, row)
			e.progress("group lock   %-20s %d values W=%d %7.0f acq/s  Lock+Unlock p50 %7.1fus p99 %7.1fus  cmds/acq %5.1f (incl. in Lua %5.1f)  Redis CPU/acq %5.1fus  violations %d%s",
				id, groupValues, w, row.PerSec, row.Cycle.P50, row.Cycle.P99, row.CmdsPerAcq, row.AllCmdsPerAcq, row.RedisCPUPerAcq, row.Violations, errSuffix(err))
		}
	}
	return res
}

// groupCell runs w workers of kind id for CellDuration, each with a
// client of its own. Worker i locks values 4i..4i+7 of a ring of
// 4*max(w,2) values, so with several workers each set shares half its
// values with each neighbour's.
func (e *env) groupCell(id string, w int) (groupRow, error) {
	row := groupRow{Kind: id, Workers: w}
	group := e.name("group")
	ring := 4 * max(w, 2)
	lockers := make([]relock.Locker, w)
	sets := make([][]int, w)
	for i := range w {
		rdb, rc, err := newRelock(e.addr, openOpts{})
		if err != nil {
			return row, err
		}
		defer rdb.Close()
		defer rc.Close()
		values := make([]string, groupValues)
		for j := range groupValues {
			sets[i] = append(sets[i], (4*i+j)%ring)
			values[j] = fmt.Sprint("v", sets[i][j])
		}
		if id == groupID {
			lockers[i] = grouplock.New(rc, group, values, nil)
			continue
		}
		members := make([]relock.Locker, len(values))
		for j, v := range values {
			members[j] = reentrant.New(rc, group+":"+v, nil)
		}
		lockers[i] = multilock.New(members...)
	}
	held := make([]atomic.Int32, ring)
	var violations atomic.Int64
	cycles := make([][]int64, w)
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.CellDuration)
	defer cancel()
	before := e.snapshot()
	began := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, w)
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := relock.WithNewOwner(context.Background())
			for ctx.Err() == nil {
				start := time.Now()
				lctx, err := lockers[i].Lock(owner)
				if err != nil {
					errs[i] = err
					return
				}
				for _, v := range sets[i] {
					if held[v].Add(1) != 1 {
						violations.Add(1)
					}
				}
				for _, v := range sets[i] {
					held[v].Add(-1)
				}
				if err := lockers[i].Unlock(lctx); err != nil {
					errs[i] = err
					return
				}
				cycles[i] = append(cycles[i], int64(time.Since(start)))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	d := before.to(e.snapshot())
	var all []int64
	for _, c := range cycles {
		all = append(all, c...)
	}
	row.Acquires = len(all)
	row.Cycle = summarize(all)
	row.PerSec = round1(float64(row.Acquires) / elapsed.Seconds())
	row.Violations = int(violations.Load())
	if n := float64(row.Acquires); n > 0 {
		row.CmdsPerAcq = round2(float64(d.sent(relockInner("info", "hrandfield"))) / n)
		row.AllCmdsPerAcq = round2(float64(d.all()) / n)
		row.RedisCPUPerAcq = round1(d.cpuUs / n)
	}
	err := errors.Join(errs...)
	if row.Violations > 0 {
		err = errors.Join(err, fmt.Errorf("%d values held twice", row.Violations))
	}
	return row, err
}

func (r *report) groupSection(b *strings.Builder) {
	g := r.Group
	fmt.Fprintf(b, "\n## (g) Group lock: %d values locked as one set\n\n", g.Values)
	fmt.Fprintf(b, "The same sets of %d values locked by package grouplock (Redisson's RedissonFasterMultiLock: the values are fields of one hash, taken, released and renewed in one script call) "+
		"and by package multilock over one reentrant.Mutex per value (one script call per member, taken in order). "+
		"W=1: one worker on its own client locking and unlocking one set; W=%d: workers on clients of their own, worker i's set being values 4i..4i+7 of a ring of %d, so each shares half its values with each neighbour. "+
		"**Lock+Unlock**: from the Lock call to Unlock's return, waits included; **cmds/acq**: commands clients sent per acquisition; **in Lua**: every command the server ran; "+
		"**violations**: values seen held by two workers at once (0 expected). Run it alone with `cd bench && go run . -scenarios g`.\n\n",
		g.Values, groupWorkers, 4*groupWorkers)
	t := table{b}
	t.header(1, "lock", "W", "acq/s", "Lock+Unlock p50", "p99", "cmds/acq", "in Lua", "Redis CPU/acq", "violations")
	for _, x := range g.Rows {
		if x.Err != "" {
			t.row(x.Kind, fmt.Sprint(x.Workers), "error: "+x.Err)
			continue
		}
		t.row(x.Kind, fmt.Sprint(x.Workers), num(x.PerSec), us(x.Cycle.P50), us(x.Cycle.P99), num(x.CmdsPerAcq), num(x.AllCmdsPerAcq), cpuUs(x.RedisCPUPerAcq), fmt.Sprint(x.Violations))
	}
}
