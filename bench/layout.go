package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
)

// Scenario (x): what a FIFO hand-off costs Redis, apart from relock's
// client and from Redisson's layout. Two reference kinds, which are not
// libraries, run the contended cells without a critical section (a
// client per worker) on one minimal client of go-redis and a
// subscription:
//
//   - bareHandoffID: the least a FIFO lock that hands over with a
//     message does. Taking or queueing is SET NX PX, else RPUSH; a
//     release checks the holder (GET), pops the queue's head, makes it
//     the holder (SET PX) and tells its client (PUBLISH): 6 calls inside
//     scripts a hand-off, and the same three messages as relock's (two
//     replies and the grant).
//   - scriptsHandoffID: relock's fair lock scripts, in Redisson's
//     RFairLock layout (lua.FairAcquire(), FairUnlock, FairGiveUp), run
//     by that same minimal client instead of relock's.
//
// Beside relock's rows and the peers' of scenario (b) in the same run,
// they split relock's Redis CPU per acquisition into what any message
// hand-off costs, what the layout's calls add, and what relock's client
// adds.
const (
	bareHandoffID    = "FIFO hand-off, bare (reference)"
	scriptsHandoffID = "relock fair scripts, bare client (reference)"
)

// layoutKinds are scenario (x)'s kinds.
func layoutKinds() []kind {
	return []kind{
		{ID: bareHandoffID, Lib: "reference", Fair: true,
			Config: "a script taking the lock (SET NX PX) or queueing (RPUSH), one releasing it to the queue's head (GET, LPOP, SET PX, PUBLISH to the head's client)",
			inner:  set("get", "set", "rpush", "lpop", "lrem", "del", "publish"), open: openHandoff(bareProtocol)},
		{ID: scriptsHandoffID, Lib: "reference", Fair: true,
			Config: "relock's fair lock scripts (Redisson's RFairLock layout) on the same client as the bare hand-off",
			inner:  relockInner(), open: openHandoff(scriptsProtocol)},
	}
}

// layoutCells are scenario (x)'s cells: (b)'s without a critical section
// and with a client per worker.
func layoutCells(cfg config) []cell {
	var cells []cell
	for _, w := range cfg.Workers {
		cells = append(cells, cell{Scenario: "layout", W: w, Clients: w, Names: 1})
	}
	return cells
}

// A handoffProtocol is the scripts of one reference kind. field is
// "<client id>:<owner>"; the release tells the new holder's client on
// "<handoffChannel>:<client id>" with a message that begins "<owner>".
type handoffProtocol struct {
	// acquire takes the lock for field or queues it, and reports
	// whether field holds it now. again is set for a queued waiter
	// that heard nothing for handoffRecheck: it takes a grant whose
	// message it missed, and does not queue twice.
	acquire func(ctx context.Context, rdb *redis.Client, name, field string, again bool) (bool, error)
	release func(ctx context.Context, rdb *redis.Client, name, field string) error
	// giveUp leaves the queue, or passes on a grant not taken.
	giveUp func(ctx context.Context, rdb *redis.Client, name, field string) error
}

// handoffChannel is the channel prefix of the reference kinds: each
// client listens on "<handoffChannel>:<client id>" for every name.
const handoffChannel = "relock-bench:handoff"

// handoffRecheck bounds a reference waiter's sleep before it attempts
// again: a grant's message could only be missed by a broken
// subscription, so this is a backstop, not a poll.
const handoffRecheck = time.Second

// handoffLease is the reference kinds' lease: far longer than a cell,
// and the keys go with it when a run is cut short.
const handoffLease = "30000"

var (
	bareTake = redis.NewScript(`
-- KEYS[1] lock (a string: the holder's field), KEYS[2] queue LIST
-- ARGV[1] field, ARGV[2] lease ms, ARGV[3] "1" for a queued waiter
-- Reply: 1 when field holds the lock, else 0 (queued).
if ARGV[3] == '1' then
	return redis.call('get', KEYS[1]) == ARGV[1] and 1 or 0
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return 1
end
redis.call('rpush', KEYS[2], ARGV[1])
return 0`)

	bareRelease = redis.NewScript(`
-- KEYS as bareTake's, KEYS[3] channel prefix
-- ARGV[1] field, ARGV[2] lease ms, ARGV[3] "1" when giving up a wait
-- Reply: 1 when field held the lock (now the next waiter's or free).
if redis.call('get', KEYS[1]) ~= ARGV[1] then
	if ARGV[3] == '1' then
		redis.call('lrem', KEYS[2], 0, ARGV[1])
	end
	return 0
end
local head = redis.call('lpop', KEYS[2])
while head do
	if redis.call('publish', KEYS[3] .. ':' .. string.sub(head, 1, 36), string.sub(head, 38)) > 0 then
		redis.call('set', KEYS[1], head, 'PX', ARGV[2])
		return 1
	end
	head = redis.call('lpop', KEYS[2])
end
redis.call('del', KEYS[1])
return 1`)
)

var bareProtocol = handoffProtocol{
	acquire: func(ctx context.Context, rdb *redis.Client, name, field string, again bool) (bool, error) {
		n, err := bareTake.Run(ctx, rdb, bareKeys(name), field, handoffLease, onOff(again)).Int()
		return n == 1, err
	},
	release: func(ctx context.Context, rdb *redis.Client, name, field string) error {
		n, err := bareRelease.Run(ctx, rdb, bareKeys(name), field, handoffLease, "0").Int()
		if err == nil && n == 0 {
			err = errors.New("bare hand-off: unlock: not held")
		}
		return err
	},
	giveUp: func(ctx context.Context, rdb *redis.Client, name, field string) error {
		return bareRelease.Run(ctx, rdb, bareKeys(name), field, handoffLease, "1").Err()
	},
}

func bareKeys(name string) []string { return []string{name, name + ":queue", handoffChannel} }

// fairWait is the fair scripts' wait timeout (fair.Options' default).
const fairWait = "300000"

var scriptsProtocol = handoffProtocol{
	acquire: func(ctx context.Context, rdb *redis.Client, name, field string, again bool) (bool, error) {
		mode := "1"
		if again {
			mode = "2"
		}
		// The script replies 1 when the caller holds the lock, and its
		// turn and wait otherwise.
		reply, err := lua.FairAcquire().Run(ctx, rdb, fairKeys(name), handoffLease, field, fairWait, mode, "publish").Result()
		if err != nil {
			return false, err
		}
		return reply == int64(1), nil
	},
	release: func(ctx context.Context, rdb *redis.Client, name, field string) error {
		err := lua.FairUnlock().Run(ctx, rdb, fairKeys(name), handoffLease, field, "publish", "1").Err()
		if errors.Is(err, redis.Nil) {
			err = errors.New("relock fair scripts: unlock: not held")
		}
		return err
	},
	giveUp: func(ctx context.Context, rdb *redis.Client, name, field string) error {
		return lua.FairGiveUp().Run(ctx, rdb, fairKeys(name), field, fairWait, "publish", handoffLease, "0").Err()
	},
}

// fairKeys are the fair scripts' KEYS for name, in Redisson's layout but
// for the channel prefix: a client listens on one channel for all names.
func fairKeys(name string) []string {
	return []string{name, layout.FairQueue(name), layout.FairTimeouts(name), handoffChannel}
}

// onOff is b as a script flag.
func onOff(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// handoffLocker is one client of a reference kind: a go-redis client and
// a subscription to its channel, opened before any attempt, so no grant
// can go unheard.
type handoffLocker struct {
	rdb    *redis.Client
	ps     *redis.PubSub
	id     string // a version-8 UUID, as relock.Client.ID: the fair scripts tell relock's waiters by it
	p      handoffProtocol
	owners atomic.Int64  // the last owner number given
	done   chan struct{} // closed when dispatch returns
	mu     sync.Mutex    // guards grants
	// grants holds each owner's wake-up, by its number, buffered so that
	// dispatch never blocks.
	grants map[string]chan struct{}
}

type handoffOwnerKey struct{}

func openHandoff(p handoffProtocol) func(string, openOpts) (locker, error) {
	return func(addr string, o openOpts) (locker, error) {
		id := uuid.New()
		id[6] = id[6]&0x0f | 0x80
		l := &handoffLocker{rdb: newGoRedis(addr, o, false), id: id.String(), p: p, done: make(chan struct{}), grants: map[string]chan struct{}{}}
		l.ps = l.rdb.Subscribe(context.Background(), handoffChannel+":"+l.id)
		if _, err := l.ps.Receive(context.Background()); err != nil {
			l.ps.Close()
			l.rdb.Close()
			return nil, err
		}
		go l.dispatch()
		return l, nil
	}
}

// dispatch wakes the owner each message names, until the subscription
// closes.
func (l *handoffLocker) dispatch() {
	defer close(l.done)
	for m := range l.ps.Channel() {
		tag, _, _ := strings.Cut(m.Payload, ":")
		l.mu.Lock()
		ch := l.grants[tag]
		l.mu.Unlock()
		if ch != nil {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

func (l *handoffLocker) owner(ctx context.Context) context.Context {
	tag := strconv.FormatInt(l.owners.Add(1), 10)
	l.mu.Lock()
	l.grants[tag] = make(chan struct{}, 1)
	l.mu.Unlock()
	return context.WithValue(ctx, handoffOwnerKey{}, tag)
}

func (l *handoffLocker) lock(ctx context.Context, name string) (*held, error) {
	tag, _ := ctx.Value(handoffOwnerKey{}).(string)
	l.mu.Lock()
	grant := l.grants[tag]
	l.mu.Unlock()
	if grant == nil {
		return nil, errors.New("reference hand-off: a context without an owner")
	}
	field := l.id + ":" + tag
	h := &held{unlock: func() error { return l.p.release(context.Background(), l.rdb, name, field) }}
	// A wake-up left from a wait given up before: not for this request.
	select {
	case <-grant:
	default:
	}
	again := false
	for {
		ok, err := l.p.acquire(ctx, l.rdb, name, field, again)
		if err != nil {
			// The script may have run (queued the caller) and only
			// its reply been lost.
			_ = l.p.giveUp(context.Background(), l.rdb, name, field)
			return nil, err
		}
		if ok {
			return h, nil
		}
		t := time.NewTimer(handoffRecheck)
		select {
		case <-grant:
			t.Stop()
			return h, nil
		case <-t.C:
			again = true
		case <-ctx.Done():
			t.Stop()
			if err := l.p.giveUp(context.Background(), l.rdb, name, field); err != nil {
				return nil, fmt.Errorf("%w (giving up: %v)", ctx.Err(), err)
			}
			return nil, ctx.Err()
		}
	}
}

func (l *handoffLocker) close() {
	l.ps.Close()
	<-l.done
	l.rdb.Close()
}

// layoutSection writes scenario (x)'s table: for each W, the reference
// kinds beside relock's locks and the leanest peer of (b)'s cell of the
// same shape.
func (r *report) layoutSection(b *strings.Builder) {
	t := table{b}
	b.WriteString("\n## (x) What a FIFO hand-off costs Redis\n\n")
	fmt.Fprintf(b, "Two reference kinds, not libraries, run (b)'s cells without a critical section, a client per worker, each client a plain go-redis client with one subscription: "+
		"**%s**: %s; **%s**: %s. "+
		"Both hand the lock to the queue's head and tell its client with a message, as relock's fair lock does; beside relock's rows and the peer with the least Redis CPU per acquisition in (b)'s cell of the same W, "+
		"they split relock's Redis CPU per acquisition into what any such hand-off costs, what the calls of Redisson's layout add, and what relock's client adds. "+
		"Columns as in (b); **/ leanest peer**: Redis CPU/acq over that peer's.\n\n",
		bareHandoffID, layoutKinds()[0].Config, scriptsHandoffID, layoutKinds()[1].Config)
	t.header(2, "lock", "W", "acq/s", "FIFO inversions", "cmds/acq", "incl. in Lua", "Redis CPU/acq", "/ leanest peer")
	for _, w := range r.Meta.Config.Workers {
		lean := r.bestPeer(w, 0, func(c *cellResult) float64 { return c.RedisCPUPerAcq }, false)
		var rows []cellResult
		for _, c := range r.Layout {
			if c.Workers == w {
				rows = append(rows, c)
			}
		}
		for _, id := range []string{"relock fair", "relock reentrant"} {
			if c := r.cell(id, w, w, 0); c != nil {
				rows = append(rows, *c)
			}
		}
		if lean != nil {
			c := *lean
			c.Kind = "leanest peer: " + c.Kind
			rows = append(rows, c)
		}
		for _, c := range rows {
			if c.Err != "" {
				t.row(c.Kind, fmt.Sprint(w), "error: "+c.Err)
				continue
			}
			vs := "–"
			if lean != nil && lean.RedisCPUPerAcq > 0 {
				vs = fmt.Sprintf("%.2f×", c.RedisCPUPerAcq/lean.RedisCPUPerAcq)
			}
			t.row(c.Kind, fmt.Sprint(w), num(c.PerSec), fmt.Sprintf("%d (%.1f%%)", c.Inversions, c.InvPct), num(c.CmdsPerAcq), num(c.AllCmdsPerAcq), cpuUs(c.RedisCPUPerAcq), vs)
		}
	}
}
