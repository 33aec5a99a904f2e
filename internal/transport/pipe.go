package transport

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Pipe sends the script calls of a client's goroutines (acquires,
// unlocks, releases) through Transport.Scripts, pipelining those that meet:
// a call that finds fewer than pipeDepth calls or batches in flight to
// its node is sent at once, on its own goroutine, as without a pipe; one
// that finds them all busy joins the node's queue, and the first of them
// to end sends the whole queue as one pipeline (one write, one read, on
// one connection) from a goroutine the client owns (Owner), and then the queue
// that formed meanwhile, until none has. A lone caller so pays nothing
// for it, and many callers share system calls and the server's reads.
//
// Each queued caller waits for its own reply under its own context: a
// caller whose context ends returns with its error at once. Its call is
// dropped when no batch has taken it yet (NotSent: nothing to undo);
// otherwise, like any call whose reply was lost, it may still run. A
// batch runs until the last deadline of its calls (OpTimeout at most,
// and none past Shutdown's cut-off), so a caller with a short deadline
// cuts no other's call short.
//
// On a cluster each master has its own queue and its own calls in flight
// (the node that owns the call's first key, as the client's layout says);
// a batch goes through the cluster client's pipeline, which follows
// MOVED and ASK. Acquires that wait for replicas have queues of their
// own (evalWait).
//
// Pipe is a redis.Scripter (Scripts') so that a lock's Ops can take it
// where they take a client: Call.Run and Eval given a Pipe go through it,
// and RunAcquire uses it; Scripter's own methods go straight to Scripts.
type Pipe struct {
	redis.Scripter
	t   *Transport
	rdb redis.UniversalClient // Transport.Scripts
	cc  *redis.ClusterClient  // rdb on a cluster, else nil
	one batcher               // rdb's, but on a cluster
	// nodes holds the batchers of a cluster's masters, by address, and
	// synced those of acquires that wait for replicas, by master
	// address ("" for a single server). A new address drops those of
	// masters no longer in the layout (masters.go): each holds at most
	// one batcher a master of the layout, plus the newest.
	nodes, synced sync.Map
}

// pipeDepth is how many calls or batches a Pipe has in flight to one
// node before calls queue. Two keep a node busy while the replies of a
// batch travel back (docs/performance.md has the measurements).
const pipeDepth = 2

// A batcher is one node's queue of calls and the count of those in
// flight.
type batcher struct {
	// rdb is the client its batches go through: Transport.Scripts, or for
	// acquires that wait for replicas the master's own client, on whose
	// connection a batch ends with one WAIT (or WAITAOF) that counts the
	// replicas that have every acquire before it. Set once.
	rdb redis.Cmdable
	// key is the key of the call that made the batcher, by which a
	// cluster's layout tells whether its master still serves it
	// (masters.go). Set once.
	key string

	mu    sync.Mutex // guards queue and busy
	queue []*job
	busy  int // calls sent directly and batches in flight
}

// A job is a queued call. Its cmd, and its sync, belong to the batch
// once queued: a caller that gave up never reads them. done is closed
// once they have their replies (or errors).
type job struct {
	ctx  context.Context
	cmd  *redis.Cmd
	sync *syncWait // for an acquire that waits for replicas
	done chan struct{}
}

// A syncWait is what an acquire waits for after its script: replicas
// (WAITAOF's count of replicas when aof) within timeoutMs; then the
// replicas that confirmed it, or the error of the wait.
type syncWait struct {
	replicas  int
	aof       bool
	timeoutMs int64
	acked     int64
	err       error
}

// newPipe returns the pipe of t, over t.Scripts.
func newPipe(t *Transport) *Pipe {
	rdb := t.Scripts
	p := &Pipe{Scripter: rdb, t: t, rdb: rdb}
	p.one.rdb = rdb
	p.cc, _ = rdb.(*redis.ClusterClient)
	return p
}

// process sends cmd, a script call whose first key is key, and returns
// the address of the master it went to on a cluster. gaveUp is ctx's
// error when the caller's context ended while the call was queued: cmd
// then belongs to the pipe, and the caller must not read it.
func (p *Pipe) process(ctx context.Context, cmd *redis.Cmd, key string) (master string, gaveUp error) {
	b := &p.one
	if p.cc != nil {
		node, err := p.cc.MasterForKey(ctx, key)
		if err != nil {
			// The cluster client reports it the same way.
			_ = p.rdb.Process(ctx, cmd)
			return "", nil
		}
		master = node.Options().Addr
		b = p.batcher(ctx, &p.nodes, master, key, p.rdb)
	}
	_, gaveUp = p.do(ctx, b, func() { _ = p.rdb.Process(ctx, cmd) }, func() *job { return &job{cmd: cmd} })
	return master, gaveUp
}

// evalWait is the package's evalWait through the pipe: an acquire that
// finds the master's synced calls busy goes out in a batch with others,
// the batch's WAIT confirming them all. rdb is the master's client, at
// addr.
func (p *Pipe) evalWait(ctx context.Context, rdb redis.Cmdable, addr string, k *Call, args []any, w *syncWait) (reply any, acked int64, err error) {
	direct := func() {
		reply, acked, err = evalWait(ctx, rdb, k.Script, k.Keys, args, w.replicas, w.aof, w.timeoutMs)
	}
	j, gaveUp := p.do(ctx, p.batcher(ctx, &p.synced, addr, k.Keys[0], rdb), direct, func() *job {
		return &job{cmd: k.command(ctx, args), sync: w}
	})
	switch {
	case gaveUp != nil:
		return nil, 0, gaveUp
	case j == nil:
		return reply, acked, err
	}
	reply, err = j.cmd.Result()
	switch {
	case err != nil && isNoScript(err):
		// The script did not run: it goes again, as EVAL.
		direct()
		return reply, acked, err
	case errors.Is(err, redis.Nil):
		reply, err = nil, nil
	}
	if err == nil {
		err = w.err
	}
	return reply, w.acked, err
}

// do sends a call through b: at once by direct, on the caller's
// goroutine, when b has a slot free; else queued as the job mk makes,
// until it is sent in a batch (then do returns the job) or ctx ends
// (gaveUp).
func (p *Pipe) do(ctx context.Context, b *batcher, direct func(), mk func() *job) (queued *job, gaveUp error) {
	b.mu.Lock()
	if b.busy < pipeDepth {
		b.busy++
		b.mu.Unlock()
		direct()
		p.next(b)
		return nil, nil
	}
	j := mk()
	j.ctx, j.done = ctx, make(chan struct{})
	b.queue = append(b.queue, j)
	b.mu.Unlock()
	select {
	case <-j.done:
		return j, nil
	case <-ctx.Done():
		if b.drop(j) {
			return nil, notSent{ctx.Err()}
		}
		return nil, ctx.Err()
	}
}

// drop takes j out of b's queue and reports whether it was still there:
// no batch took it, so it is never sent.
func (b *batcher) drop(j *job) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	i := slices.Index(b.queue, j)
	if i < 0 {
		return false
	}
	b.queue = slices.Delete(b.queue, i, i+1)
	return true
}

// notSent is the error of a call a Pipe dropped from its queue because
// its caller's context ended first: the call never reached Redis, so
// there is nothing to undo. It matches the context's error.
type notSent struct{ err error }

func (e notSent) Error() string { return e.err.Error() + " (before the call was sent)" }
func (e notSent) Unwrap() error { return e.err }

// NotSent reports whether err is that of a call a Pipe never sent (its
// caller's context ended while it was queued): unlike a call whose reply
// was lost, it did not run and never will.
func NotSent(err error) bool {
	var e notSent
	return errors.As(err, &e)
}

// batcher returns the batcher in m of the master at addr, made with
// rdb for key's call if it is new; a new one on a cluster drops those of
// masters no longer in the layout (masters.go).
func (p *Pipe) batcher(ctx context.Context, m *sync.Map, addr, key string, rdb redis.Cmdable) *batcher {
	if b, ok := m.Load(addr); ok {
		return b.(*batcher)
	}
	b, loaded := m.LoadOrStore(addr, &batcher{rdb: rdb, key: key})
	if !loaded && p.cc != nil {
		pruneBatchers(ctx, p.cc, m, addr)
	}
	return b.(*batcher)
}

// next hands b's slot, freed by a call or a batch that ended, to the
// calls queued meanwhile, if any, sent as one batch in a goroutine the
// client owns; after Shutdown began, on this one.
func (p *Pipe) next(b *batcher) {
	b.mu.Lock()
	if len(b.queue) == 0 {
		b.busy--
		b.mu.Unlock()
		return
	}
	q := b.queue
	b.queue = nil
	b.mu.Unlock()
	if !p.t.cfg.Owner.Background(func() { p.drain(b, q) }) {
		p.drain(b, q)
	}
}

// drain sends q, then each queue formed while it was in flight, and
// frees b's slot once none formed.
func (p *Pipe) drain(b *batcher, q []*job) {
	for {
		p.send(b, q)
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.busy--
			b.mu.Unlock()
			return
		}
		q = b.queue
		b.queue = nil
		b.mu.Unlock()
	}
}

// send sends q's calls whose callers still wait as one pipeline through
// b's client, until the last of their deadlines, and tells every caller.
func (p *Pipe) send(b *batcher, q []*job) {
	now := time.Now()
	end := now
	cmds := make([]redis.Cmder, 0, len(q)+1)
	var w *syncWait // the batch's wait, the most any of its calls asks
	for _, j := range q {
		if err := j.ctx.Err(); err != nil {
			j.cmd.SetErr(err)
			continue
		}
		d, ok := j.ctx.Deadline()
		if !ok || d.Sub(now) > OpTimeout {
			d = now.Add(OpTimeout)
		}
		end = later(end, d)
		cmds = append(cmds, j.cmd)
		if s := j.sync; s != nil {
			if w == nil {
				w = &syncWait{}
			}
			w.replicas, w.aof, w.timeoutMs = max(w.replicas, s.replicas), w.aof || s.aof, max(w.timeoutMs, s.timeoutMs)
		}
	}
	if len(cmds) > 0 {
		ctx, cancel := context.WithDeadline(p.t.cfg.End, end)
		var wait *redis.Cmd
		// Each call's error is its own command's.
		_, _ = b.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, cmd := range cmds {
				_ = pipe.Process(ctx, cmd)
			}
			if w != nil {
				wait = waitCmd(ctx, pipe, w)
			}
			return nil
		})
		cancel()
		if w != nil {
			w.acked, w.err = waitReply(wait)
			for _, j := range q {
				if j.sync != nil {
					j.sync.acked, j.sync.err = w.acked, w.err
				}
			}
		}
	}
	for _, j := range q {
		close(j.done)
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
