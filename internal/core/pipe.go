package core

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Pipe sends the script calls of a client's goroutines (acquires,
// unlocks, releases) through Client.Scripts, pipelining those that meet:
// a call that finds fewer than PipeDepth calls or batches in flight to
// its node is sent at once, on its own goroutine, as without a pipe; one
// that finds them all busy joins the node's queue, and the first of them
// to end sends the whole queue as one pipeline (one write, one read, on
// one connection) from a goroutine the client owns, and then the queue
// that formed meanwhile, until none has. A lone caller so pays nothing
// for it, and many callers share system calls and the server's reads.
//
// Each queued caller waits for its own reply under its own context: a
// caller whose context ends returns with its error at once, and its
// call, like any call whose reply was lost, may still run (it is not sent
// when it has not been yet). The batch runs until the last deadline of
// its calls (OpTimeout at most, and none past Shutdown's cut-off), so a
// caller with a short deadline cuts no other's call short.
//
// On a cluster each master has its own queue and its own calls in flight
// (the node that owns the call's first key, as the client's layout says);
// a batch goes through the cluster client's pipeline, which follows
// MOVED and ASK.
//
// Pipe is a redis.Scripter (Scripts') so that a lock's Ops can take it
// where they take a client; only Call.Run goes through the pipe.
type Pipe struct {
	redis.Scripter
	c     *Client
	rdb   redis.UniversalClient // Client.Scripts
	cc    *redis.ClusterClient  // rdb on a cluster, else nil
	one   batcher               // rdb's, but on a cluster
	nodes sync.Map              // master address → *batcher, on a cluster
}

// PipeDepth is how many calls or batches a Pipe has in flight to one
// node before calls queue. Two keep a node busy while the replies of a
// batch travel back (docs/performance.md has the measurements).
const PipeDepth = 2

// A batcher is one node's queue of calls and the count of those in
// flight.
type batcher struct {
	mu    sync.Mutex // guards queue and busy
	queue []*job
	busy  int // calls sent directly and batches in flight
}

// A job is a queued call. Its cmd belongs to the batch once queued: a
// caller that gave up never reads it. done is closed once cmd has its
// reply (or error).
type job struct {
	ctx  context.Context
	cmd  *redis.Cmd
	done chan struct{}
}

// newPipe returns the pipe of c over rdb, c's Scripts.
func newPipe(c *Client, rdb redis.UniversalClient) *Pipe {
	p := &Pipe{Scripter: rdb, c: c, rdb: rdb}
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
		b = p.node(master)
	}
	b.mu.Lock()
	if b.busy < PipeDepth {
		b.busy++
		b.mu.Unlock()
		_ = p.rdb.Process(ctx, cmd)
		p.next(b)
		return master, nil
	}
	j := &job{ctx: ctx, cmd: cmd, done: make(chan struct{})}
	b.queue = append(b.queue, j)
	b.mu.Unlock()
	select {
	case <-j.done:
		return master, nil
	case <-ctx.Done():
		return master, ctx.Err()
	}
}

// node returns the batcher of the master at addr.
func (p *Pipe) node(addr string) *batcher {
	if b, ok := p.nodes.Load(addr); ok {
		return b.(*batcher)
	}
	b, _ := p.nodes.LoadOrStore(addr, new(batcher))
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
	if !p.c.Background(func() { p.drain(b, q) }) {
		p.drain(b, q)
	}
}

// drain sends q, then each queue formed while it was in flight, and
// frees b's slot once none formed.
func (p *Pipe) drain(b *batcher, q []*job) {
	for {
		p.send(q)
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

// send sends q's calls whose callers still wait as one pipeline, until
// the last of their deadlines, and tells every caller.
func (p *Pipe) send(q []*job) {
	now := time.Now()
	end := now
	cmds := make([]redis.Cmder, 0, len(q))
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
	}
	if len(cmds) > 0 {
		ctx, cancel := context.WithDeadline(p.c.bg.end, end)
		// Each call's error is its own command's.
		_, _ = p.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, cmd := range cmds {
				_ = pipe.Process(ctx, cmd)
			}
			return nil
		})
		cancel()
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
