package inspect

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// maxCycles bounds the deadlocks reported: the cycles of a waits-for
// graph can be exponentially many.
const maxCycles = 100

// deadlocks finds waits-for cycles among the owners of locks. An owner
// waits for a lock when relock's registry or a fair queue names it; it
// waits for the lock's holders. relock's owner fields name one call
// chain (a context's owner), Redisson's a thread, so an owner that holds
// one lock and waits in a registry or queue of another is one waiter
// holding both: a cycle of them is a deadlock that only a lease's end or
// a force-unlock breaks. Redisson's waiters on a non-fair lock register
// nowhere, so cycles through them are not seen.
func deadlocks(locks []*Lock) []Finding {
	waits := make(map[string][]*Lock) // owner field -> locks it waits for
	for _, l := range locks {
		for _, w := range l.Waiters {
			waits[w.Field] = append(waits[w.Field], l)
		}
		for _, q := range l.Queue {
			if !slices.ContainsFunc(l.Waiters, func(w Waiter) bool { return w.Field == q.Field }) {
				waits[q.Field] = append(waits[q.Field], l)
			}
		}
	}
	// edge: owner -> (holder, lock)
	type edge struct {
		to   string
		lock string
	}
	graph := make(map[string][]edge)
	for owner, ls := range waits {
		for _, l := range ls {
			for _, h := range l.Holders {
				if h.Field != owner {
					graph[owner] = append(graph[owner], edge{h.Field, l.Name})
				}
			}
		}
	}
	nodes := slices.Sorted(maps.Keys(graph))
	index := make(map[string]int, len(nodes))
	for i, n := range nodes {
		index[n] = i
	}
	for _, n := range nodes {
		slices.SortFunc(graph[n], func(a, b edge) int { return strings.Compare(a.to+a.lock, b.to+b.lock) })
	}
	var found []Finding
	// Each elementary cycle is found once, from its smallest owner: the
	// search from start goes only through owners after it.
	for si, start := range nodes {
		var owners, held []string
		onPath := map[string]bool{}
		var visit func(n string)
		visit = func(n string) {
			if len(found) == maxCycles {
				return
			}
			owners, onPath[n] = append(owners, n), true
			for _, e := range graph[n] {
				switch {
				case e.to == start:
					found = append(found, cycle(slices.Clone(owners), append(slices.Clone(held), e.lock)))
				case !onPath[e.to] && index[e.to] > si: // an owner that waits for nothing has no index: 0
					held = append(held, e.lock)
					visit(e.to)
					held = held[:len(held)-1]
				}
			}
			owners, onPath[n] = owners[:len(owners)-1], false
		}
		visit(start)
	}
	return found
}

// cycle reports owners[i] waiting for locks[i], held by owners[i+1].
func cycle(owners, locks []string) Finding {
	var b strings.Builder
	for i, o := range owners {
		next := owners[(i+1)%len(owners)]
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s waits for %s, held by %s", o, locks[i], next)
	}
	return Finding{Problem: Deadlock, Name: locks[0], Kind: KindLock, Owners: owners, Locks: locks,
		Detail: "waits-for cycle: " + b.String() + ": none goes on until a lease ends or one is force-unlocked"}
}
