package main

import (
	"context"
	"fmt"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/semaphore"
)

// semaphoreID labels scenario (s)'s rows.
const semaphoreID = "relock semaphore"

// semaphoreKind is scenario (s)'s only kind: relock's semaphore, each
// acquisition one permit. The peers have no semaphore.
func semaphoreKind() kind {
	return kind{ID: semaphoreID, Lib: "relock", Config: "defaults; Acquire(1), Release(1); go-redis client as the locks'", Relock: true,
		inner: relockInner("get", "decrby", "incrby", "persist"), open: openRelock(semaphorePermit)}
}

// semaphoreTTL is the semaphores' Options.TTL, far longer than a cell:
// their keys hold a count after the last Release, and a run with -redis
// leaves none behind for long.
const semaphoreTTL = 10 * time.Minute

// semaphorePermit is semaphoreKind's mutexMaker: one permit of the
// semaphore name, which it gives o.permits permits unless it has a
// count already (the first client to use the name sets it).
func semaphorePermit(ctx context.Context, rc *relock.Client, name string, o openOpts) (relockMutex, error) {
	s := semaphore.New(rc, name, &semaphore.Options{TTL: semaphoreTTL})
	if _, err := s.TrySetPermits(ctx, int64(o.permits)); err != nil {
		return nil, err
	}
	return permit{s}, nil
}

// A permit is one permit of a semaphore, taken and given back as a lock.
type permit struct{ s *semaphore.Semaphore }

func (p permit) Lock(ctx context.Context) (context.Context, error) { return ctx, p.s.Acquire(ctx, 1) }

func (p permit) Unlock(ctx context.Context) error { return p.s.Release(ctx, 1) }

// semaphoreCells lists scenario (s)'s cells: for each permits count,
// every W with a client per worker.
func semaphoreCells(cfg config) []cell {
	var cells []cell
	for _, n := range cfg.SemaphorePermits {
		for _, w := range cfg.SemaphoreWorkers {
			cells = append(cells, cell{Scenario: "semaphore", W: w, Clients: w, Names: 1, Permits: n})
		}
	}
	return cells
}

// besideCells lists the one-permit cells of scenario (s), which the
// reentrant lock's cell of the same workers runs right before and after.
func besideCells(cfg config) []cell {
	var cells []cell
	for _, c := range semaphoreCells(cfg) {
		if c.Permits == 1 {
			cells = append(cells, c)
		}
	}
	return cells
}

// reentrantKind is relock's reentrant lock, as scenario (b) runs it.
func reentrantKind() kind {
	for _, k := range kinds() {
		if k.ID == "relock reentrant" {
			return k
		}
	}
	panic("bench: no relock reentrant kind")
}

// runSemaphore runs one cell of scenario (s) as a contended cell: its
// workers loop Acquire(1), Release(1) on one semaphore of c.Permits
// permits. More holders at once than permits is an error of the row.
func (e *env) runSemaphore(c cell) (cellResult, error) {
	res, err := e.runCell(semaphoreKind(), c)
	if err == nil && res.Violations > 0 {
		err = fmt.Errorf("%d grants made more than %d holders at once", res.Violations, c.Permits)
	}
	return res, err
}
