package faulttest_test

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// An acquisition is one successful Lock and the hold that followed, as
// the acquiring client saw it. Times are nanoseconds on the monotonic
// clock since the run began.
type acquisition struct {
	Client int
	Lock   int // index of the lock name
	Call   int64
	Return int64 // when Lock returned the lock context
	// End is when the hold ended for the holder: the Unlock call or the
	// moment the lock context was cancelled (lease lost, fixed lease's
	// deadline), whichever came first. relock promises that nobody else
	// gets the lock before it.
	End int64
	// Settled is when an Unlock returned an answer (released, or not
	// held), so the lock was free of this hold by then; the run's end if
	// no Unlock ever answered.
	Settled int64
	Token   int64 // fencing token; 0 if it could not be read
}

// mutexOp is a porcupine operation's input: one client acquiring or
// releasing one lock.
type mutexOp struct {
	Lock, Client int
	Acquire      bool
}

// free is the model's state of a lock nobody holds; otherwise the state
// is the holder's client index.
const free = -1

// mutexModel is a mutex per lock: an acquire succeeds only on a free
// lock, a release only by the holder. Locks are independent, so the
// history is partitioned by lock.
var mutexModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[int][]porcupine.Operation{}
		for _, op := range h {
			l := op.Input.(mutexOp).Lock
			by[l] = append(by[l], op)
		}
		var out [][]porcupine.Operation
		for _, l := range slices.Sorted(maps.Keys(by)) {
			out = append(out, by[l])
		}
		return out
	},
	Init: func() any { return free },
	Step: func(state, input, _ any) (bool, any) {
		s, op := state.(int), input.(mutexOp)
		switch {
		case op.Acquire && s == free:
			return true, op.Client
		case !op.Acquire && s == op.Client:
			return true, free
		}
		return false, s
	},
	DescribeOperation: func(input, _ any) string {
		op := input.(mutexOp)
		if op.Acquire {
			return fmt.Sprintf("lock%d.acquire(c%d)", op.Lock, op.Client)
		}
		return fmt.Sprintf("lock%d.release(c%d)", op.Lock, op.Client)
	},
	DescribeState: func(state any) string {
		if state.(int) == free {
			return "free"
		}
		return fmt.Sprintf("held by c%d", state.(int))
	},
}

// operations turns acquisitions into porcupine's history: each is an
// acquire over [Call, Return] and a release over [End, Settled]. The
// release's interval is where the lock's server-side release must lie:
// not before the holder stopped relying on the lock (relock's promise),
// and not after an Unlock answered.
func operations(h []acquisition) []porcupine.Operation {
	ops := make([]porcupine.Operation, 0, 2*len(h))
	for _, a := range h {
		ops = append(ops,
			porcupine.Operation{ClientId: a.Client, Input: mutexOp{a.Lock, a.Client, true}, Call: a.Call, Return: a.Return},
			porcupine.Operation{ClientId: a.Client, Input: mutexOp{a.Lock, a.Client, false}, Call: a.End, Return: a.Settled})
	}
	return ops
}

// A verdict is what the checker found.
type verdict struct {
	Linearizable porcupine.CheckResult
	CheckTime    time.Duration
	// Overlap names two holds of one lock that certainly overlapped,
	// when there are: the later one's Lock returned before the earlier
	// one's hold ended. Porcupine's verdict is the check; this is the
	// readable witness.
	Overlap string
	// TokenOrder names the first pair of successive grants whose fencing
	// tokens did not increase.
	TokenOrder string
	Tokens     int // holds whose token took part in the order check
}

func (v verdict) String() string {
	return fmt.Sprintf("porcupine: %v in %v; overlap witness: %q; token order: %q (%d tokens checked)",
		result(v.Linearizable), v.CheckTime.Round(time.Millisecond), v.Overlap, v.TokenOrder, v.Tokens)
}

func result(r porcupine.CheckResult) string {
	switch r {
	case porcupine.Ok:
		return "linearizable"
	case porcupine.Illegal:
		return "NOT linearizable"
	}
	return "unknown (timed out)"
}

// check runs the checker: porcupine against the mutex model, the overlap
// witness, and the rule that fencing tokens strictly increase in grant
// order. Grant order is the order of Lock's return: for holds that do not
// overlap (which porcupine checks), the earlier hold's Lock returned
// before its hold ended, and the later one was granted after that.
func check(h []acquisition, timeout time.Duration) verdict {
	var v verdict
	start := time.Now()
	v.Linearizable = porcupine.CheckOperationsTimeout(mutexModel, operations(h), timeout)
	v.CheckTime = time.Since(start)

	byLock := map[int][]acquisition{}
	for _, a := range h {
		byLock[a.Lock] = append(byLock[a.Lock], a)
	}
	for _, l := range slices.Sorted(maps.Keys(byLock)) {
		holds := byLock[l]
		slices.SortFunc(holds, func(a, b acquisition) int { return cmp.Compare(a.Return, b.Return) })
		var last, longest *acquisition // longest: the earlier hold that ended last
		for i := range holds {
			a := &holds[i]
			if longest != nil && longest.End > a.Return && v.Overlap == "" {
				v.Overlap = fmt.Sprintf("lock%d: c%d's hold [%v, %v] and c%d's Lock returning at %v",
					l, longest.Client, ms(longest.Return), ms(longest.End), a.Client, ms(a.Return))
			}
			if longest == nil || a.End > longest.End {
				longest = a
			}
			if a.Token == 0 {
				continue
			}
			v.Tokens++
			if last != nil && a.Token <= last.Token && v.TokenOrder == "" {
				v.TokenOrder = fmt.Sprintf("lock%d: token %d (c%d, granted by %v) after token %d (c%d, granted by %v)",
					l, a.Token, a.Client, ms(a.Return), last.Token, last.Client, ms(last.Return))
			}
			last = a
		}
	}
	return v
}

func ms(ns int64) time.Duration { return time.Duration(ns).Round(time.Microsecond) }

// TestChecker pins the checker on hand-made histories: a clean handoff
// passes; overlapping holds, a release before the holder stopped, and
// tokens out of grant order each fail.
func TestChecker(t *testing.T) {
	a := func(c int, call, ret, end, settled, token int64) acquisition {
		return acquisition{Client: c, Call: call, Return: ret, End: end, Settled: settled, Token: token}
	}
	for _, tc := range []struct {
		name       string
		h          []acquisition
		linear     bool
		tokensGood bool
	}{
		{"handoff", []acquisition{a(0, 0, 10, 20, 25, 1), a(1, 5, 30, 40, 45, 2), a(2, 0, 46, 50, 60, 3)}, true, true},
		// c1 waited from 5; the server may grant it anywhere in [5, 30],
		// so after c0's release at 22 is possible.
		{"concurrent calls", []acquisition{a(0, 0, 10, 20, 25, 1), a(1, 5, 22, 40, 45, 2)}, true, true},
		{"overlap", []acquisition{a(0, 0, 10, 20, 25, 1), a(1, 5, 15, 40, 45, 2)}, false, true},
		{"unsettled release", []acquisition{a(0, 0, 10, 20, 1000, 1), a(1, 5, 30, 40, 45, 2), a(2, 50, 60, 70, 80, 3)}, true, true},
		{"token order", []acquisition{a(0, 0, 10, 20, 25, 5), a(1, 5, 30, 40, 45, 4)}, true, false},
		{"equal tokens", []acquisition{a(0, 0, 10, 20, 25, 5), a(1, 5, 30, 40, 45, 5)}, true, false},
		{"unknown token", []acquisition{a(0, 0, 10, 20, 25, 5), a(1, 5, 30, 40, 45, 0), a(2, 0, 46, 50, 60, 6)}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := check(tc.h, 10*time.Second)
			t.Log(v)
			if got := v.Linearizable == porcupine.Ok; got != tc.linear {
				t.Errorf("linearizable %v, want %v", got, tc.linear)
			}
			if got := v.Overlap == ""; got != tc.linear {
				t.Errorf("overlap witness %q, want one: %v", v.Overlap, !tc.linear)
			}
			if got := v.TokenOrder == ""; got != tc.tokensGood {
				t.Errorf("token order %q, want good: %v", v.TokenOrder, tc.tokensGood)
			}
		})
	}
}
