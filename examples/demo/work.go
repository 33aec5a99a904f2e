package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/reentrant"
)

// stats is what one worker observed. Only its worker writes it;
// runWorkers hands it on once every worker is done.
type stats struct {
	client, worker int
	locks          int           // outer acquisitions (transfer)
	reentries      int           // nested acquisitions seen with hold count 2
	longestWait    time.Duration // longest time an outer Lock waited
	err            error
}

// A worker is one goroutine with its own lock owner. Workers of the same
// client share its go-redis client and relock Client, as goroutines of
// one process would.
type worker struct {
	rdb *redis.Client
	mu  *reentrant.Mutex
	st  *stats
}

// A process is what one service process would have: a go-redis client
// and a relock Client over it.
type process struct {
	rdb *redis.Client
	rc  *relock.Client
}

// startProcesses returns n processes on the Redis at addr.
func startProcesses(addr string, n int) ([]process, error) {
	var ps []process
	for range n {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		rc, err := relock.New(rdb, nil)
		if err != nil {
			rdb.Close()
			stopProcesses(ps)
			return nil, err
		}
		ps = append(ps, process{rdb: rdb, rc: rc})
	}
	return ps, nil
}

// stopProcesses shuts the relock Clients down, as a service does on
// SIGTERM: their waits end and the locks they still hold (after an
// interrupt, say) are released, within a few seconds at most, rather than
// left to their leases; then it closes the go-redis clients.
func stopProcesses(ps []process) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range ps {
		p.rc.Shutdown(ctx)
		p.rdb.Close()
	}
}

// runWorkers runs cfg.workers workers on each process and waits for them.
func runWorkers(ctx context.Context, ps []process, cfg config) ([]*stats, error) {
	var results []*stats
	var wg sync.WaitGroup
	for c, p := range ps {
		mu := reentrant.New(p.rc, lockName, nil)
		for w := range cfg.workers {
			st := &stats{client: c + 1, worker: w + 1}
			results = append(results, st)
			wk := &worker{rdb: p.rdb, mu: mu, st: st}
			wg.Go(func() { st.err = wk.run(ctx, cfg.iterations) })
		}
	}
	wg.Wait()
	for _, st := range results {
		if st.err != nil {
			return results, fmt.Errorf("client %d worker %d: %w", st.client, st.worker, st.err)
		}
	}
	return results, nil
}

// run increments the counter n times. Its context carries a fresh owner,
// so its Lock calls wait for every other worker's holds, including those
// of workers on the same Client.
func (w *worker) run(ctx context.Context, n int) error {
	ctx = relock.WithNewOwner(ctx)
	for range n {
		if err := w.transfer(ctx); err != nil {
			return err
		}
	}
	return nil
}

// transfer is the outer operation: it takes the lock, then calls increment,
// which takes it again further down the call chain.
func (w *worker) transfer(ctx context.Context) (err error) {
	start := time.Now()
	ctx, err = w.mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.mu.Unlock(ctx)) }()
	w.st.locks++
	w.st.longestWait = max(w.st.longestWait, time.Since(start))
	return w.increment(ctx)
}

// increment locks the mutex that transfer already holds. Because ctx is
// the context transfer's Lock returned, this Lock re-enters at once (hold
// count 2) and its Unlock releases only this hold.
func (w *worker) increment(ctx context.Context) (err error) {
	ctx, err = w.mu.Lock(ctx)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, w.mu.Unlock(ctx)) }()
	holds, err := w.mu.HoldCount(ctx)
	if err != nil {
		return err
	}
	if holds != 2 {
		return fmt.Errorf("hold count %d inside increment, want 2", holds)
	}
	w.st.reentries++

	// The non-atomic read-modify-write that only the lock keeps exact.
	// It runs on the lock's context, which is cancelled (with cause
	// relock.ErrLockLost) if the lease is lost.
	v, err := w.rdb.Get(ctx, counterKey).Int()
	if errors.Is(err, redis.Nil) {
		v, err = 0, nil
	}
	if err == nil {
		err = w.rdb.Set(ctx, counterKey, v+1, 0).Err()
	}
	if err != nil && context.Cause(ctx) != nil {
		return fmt.Errorf("%w (lock context: %w)", err, context.Cause(ctx))
	}
	return err
}
