package inspect

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/derive"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// Read returns what is kept under name, read in one script for a lock
// and one for the synchronizers: a consistent snapshot of each. Its Kind
// tells a lock, a read/write lock, a group lock, a count, an election, a
// fencing counter or a fence guard's token (recordRules), whatever the
// record's state; a count's Use tells a semaphore's, an expirable
// semaphore's or a latch's while someone holds or waits. rdb is any
// go-redis client (a *redis.Client, a failover client or a
// *redis.ClusterClient). A name with nothing under it is no error: its
// Kind is KindNone (see Lock.Exists). An invalid name is an error
// matching relock.ErrInvalidName, a nil rdb one matching
// relock.ErrInvalidArgument.
//
// Read returns by ctx's deadline: when rdb does not cut calls off there
// itself (go-redis's ContextTimeoutEnabled), Read reads through a
// connection of its own that does, and rdb's hooks do not see it; a
// caller that reads often (a watch loop) passes a client with
// ContextTimeoutEnabled, whose pooled connections are reused.
func Read(ctx context.Context, rdb redis.UniversalClient, name string) (*Lock, error) {
	if transport.IsNil(rdb) {
		return nil, fmt.Errorf("inspect: nil redis client: %w", relock.ErrInvalidArgument)
	}
	if err := core.ValidateName(name); err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
	rdb, done := derive.Deadlines(rdb)
	defer done()
	l, raw, err := readLock(ctx, rdb, name)
	if err != nil {
		return nil, err
	}
	keys := []string{
		name, layout.PermitTimeouts(name), layout.SemaphoreWaiters(name), layout.SemaphoreGrants(name),
		layout.SemaphoreWatcher(name), layout.ElectionLeader(name), layout.ElectionTerm(name), layout.ElectionLog(name),
	}
	reply, err := transport.Eval(ctx, rdb, lua.InspectSync(), keys, MaxListed, MaxHistory)
	if err != nil {
		return nil, fmt.Errorf("inspect: reading %q: %w", name, transport.Ended(ctx, nil, err))
	}
	s, err := decodeSync(reply)
	if err != nil {
		return nil, fmt.Errorf("inspect: reading %q: unexpected reply %v: %w", name, reply, err)
	}
	l.setSync(s)
	l.setRecord(&shape{typ: raw.typ, fields: raw.fields, value: s.value}, raw.leases)
	if l.Kind == KindCount {
		u := usage{permits: len(s.permits) > 0, semaphore: len(s.waiters) > 0 || s.grants > 0 || s.watcher}
		if !u.permits && !u.semaphore {
			if u.semaphore, u.latch, err = listened(ctx, rdb, name); err != nil {
				return nil, fmt.Errorf("inspect: reading %q: %w", name, transport.Ended(ctx, nil, err))
			}
		}
		l.Use = useOf(u)
	}
	if l.Election != nil {
		lock, lraw, err := readLock(ctx, rdb, layout.ElectionLock(name))
		if err != nil {
			return nil, err
		}
		lock.setRecord(&shape{typ: lraw.typ, fields: lraw.fields}, lraw.leases)
		l.Election.setElectionLock(lock)
	}
	if l.Fence, err = readFence(ctx, rdb, name); err != nil {
		return nil, err
	}
	l.ElectionOf, _ = nameOf(layout.ElectionLock, name)
	switch {
	case l.Kind != KindNone:
	case l.Election != nil:
		l.Kind = KindElection
	case l.Fair:
		// A fair lock's queue keys with no lock hash: nobody holds it,
		// and its waiters are between two tries, or gone.
		l.Kind = KindLock
	case l.Token != 0:
		l.Kind = KindFencing
	case l.Fence != 0:
		l.Kind = KindFence
	}
	return l, nil
}

// readFence reads the last token package fence's Redis guard recorded
// for the resource name, 0 for none.
func readFence(ctx context.Context, rdb redis.UniversalClient, name string) (int64, error) {
	v, err := rdb.Get(ctx, layout.FenceLast(name)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("inspect: reading %q's fence token: %w", name, transport.Ended(ctx, nil, err))
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n, nil
}

// listened reports whether anyone listens on the semaphore's channel
// and on the latch's: what tells a semaphore's count from a latch's. On
// a cluster it counts sharded subscribers too.
func listened(ctx context.Context, rdb redis.UniversalClient, name string) (semaphore, latch bool, err error) {
	sc, lc := layout.SemaphoreChannel(name), layout.LatchChannel(name)
	counts, err := subscribers(ctx, rdb, []string{sc, lc})
	return counts[sc] > 0, counts[lc] > 0, err
}

// readLock reads the lock keys of name in inspect_read.lua.
func readLock(ctx context.Context, rdb redis.UniversalClient, name string) (*Lock, *rawLock, error) {
	keys := []string{
		name,
		layout.FairQueue(name),
		layout.FairTimeouts(name),
		layout.LockWaiters(name),
		layout.LockToken(name),
		// inspect_read.lua wants the read holds' prefix with the colon
		// that follows it.
		layout.ReadTimeoutsPrefix(name) + ":",
	}
	reply, err := transport.Eval(ctx, rdb, lua.InspectRead(), keys, MaxReadLeases)
	if err != nil {
		return nil, nil, fmt.Errorf("inspect: reading %q: %w", name, transport.Ended(ctx, nil, err))
	}
	l, raw, err := decode(name, reply)
	if err != nil {
		return nil, nil, fmt.Errorf("inspect: reading %q: unexpected reply %v: %w", name, reply, err)
	}
	return l, raw, nil
}

// rawLock is what decode leaves for setRecord, which needs the
// synchronizers' state too.
type rawLock struct {
	typ    string
	fields []string
	leases map[string][]TTL
}

// decode builds a Lock from inspect_read.lua's reply, but for its
// record (rawLock).
func decode(name string, reply any) (*Lock, *rawLock, error) {
	r, ok := reply.([]any)
	if !ok || len(r) != 11 {
		return nil, nil, errReply
	}
	kind, _ := r[0].(string)
	pttl, _ := r[1].(int64)
	fields, err1 := strs(r[2])
	queue, err2 := strs(r[4])
	deadlines, err3 := strs(r[5])
	waiters, err4 := strs(r[6])
	now, err5 := strs(r[8])
	leases, err6 := readLeases(r[3])
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return nil, nil, err
	}
	if len(now) != 2 {
		return nil, nil, errReply
	}
	l := &Lock{
		Name:    name,
		Kind:    KindNone,
		TTL:     ttl(pttl),
		Holders: []Holder{},
		Queue:   []Queued{},
		Waiters: []Waiter{},
	}
	sec, _ := strconv.ParseInt(now[0], 10, 64)
	usec, _ := strconv.ParseInt(now[1], 10, 64)
	l.ServerTime = time.Unix(sec, usec*1000).UTC()
	if token, ok := r[7].(string); ok {
		l.Token, _ = strconv.ParseInt(token, 10, 64)
	}
	l.setQueue(queue, deadlines)
	if l.Fair {
		l.QueueTTL = queueTTL(r[9], r[10])
	}
	for i := 0; i+1 < len(waiters); i += 2 {
		field, fenced := strings.CutPrefix(waiters[i], "f:")
		l.Waiters = append(l.Waiters, Waiter{Ident: ident(field), Fenced: fenced, Since: micros(waiters[i+1])})
	}
	return l, &rawLock{typ: kind, fields: fields, leases: leases}, nil
}

var errReply = errors.New("not the script's shape")

// queueTTL is the time the later of a fair lock's queue keys has left,
// from their PTTL replies: NoExpiry when either has none, NoKey when
// neither exists.
func queueTTL(queue, deadlines any) TTL {
	q, _ := queue.(int64)
	d, _ := deadlines.(int64)
	if q == -1 || d == -1 {
		return NoExpiry
	}
	return ttl(max(q, d))
}

// setRecord sets the kind of the record at the name (recordRules) and,
// for a lock, its holders and a read/write lock's mode and read leases.
func (l *Lock) setRecord(s *shape, leases map[string][]TTL) {
	l.Kind = kindOf(s)
	switch l.Kind {
	case KindLock, KindRWLock:
	case KindGroup:
		l.setGroupHolders(s.fields)
		return
	case KindOther:
		l.Type = s.typ
		return
	default:
		return
	}
	fields := s.fields
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == "mode" {
			l.Mode = fields[i+1]
		}
	}
	for i := 0; i+1 < len(fields); i += 2 {
		f := fields[i]
		if l.Kind == KindRWLock && f == "mode" {
			continue
		}
		holds, _ := strconv.ParseInt(fields[i+1], 10, 64)
		h := Holder{Holds: holds}
		if l.Kind == KindRWLock {
			f, h.Write = strings.CutSuffix(f, ":write")
			if !h.Write {
				h.ReadLeases = leases[f]
			}
		}
		h.Ident = ident(f)
		l.Holders = append(l.Holders, h)
	}
	slices.SortFunc(l.Holders, func(a, b Holder) int {
		if a.Write != b.Write {
			if a.Write {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Field, b.Field)
	})
}

// setGroupHolders reads a group lock's holders from its fields: a
// value's holder holds it while the value's expire_time (epoch ms, the
// holders' clocks) is ahead of the server's time; a value whose holder's
// expiry passed is free, whatever its fields still say.
func (l *Lock) setGroupHolders(fields []string) {
	m := make(map[string]string, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i]] = fields[i+1]
	}
	now := l.ServerTime.UnixMilli()
	byOwner := map[string]*Holder{}
	for f, owner := range m {
		if !ownerField(owner) {
			continue
		}
		expiry, err := strconv.ParseInt(m[f+":"+owner+":expire_time"], 10, 64)
		if err != nil || expiry <= now {
			continue
		}
		h := byOwner[owner]
		if h == nil {
			h = &Holder{Ident: ident(owner)}
			byOwner[owner] = h
		}
		holds, _ := strconv.ParseInt(m[f+":"+owner+":lock_count"], 10, 64)
		h.Holds = max(h.Holds, holds)
		h.Values = append(h.Values, f)
	}
	for _, h := range byOwner {
		slices.Sort(h.Values)
		l.Holders = append(l.Holders, *h)
	}
	slices.SortFunc(l.Holders, func(a, b Holder) int { return cmp.Compare(a.Field, b.Field) })
}

// setQueue reads a fair lock's queue and its deadlines (flat, member
// then score in epoch ms).
func (l *Lock) setQueue(queue, deadlines []string) {
	due := make(map[string]time.Time, len(deadlines)/2)
	for i := 0; i+1 < len(deadlines); i += 2 {
		ms, _ := strconv.ParseFloat(deadlines[i+1], 64)
		due[deadlines[i]] = time.UnixMilli(int64(ms)).UTC()
	}
	l.Fair = len(queue) > 0 || len(due) > 0
	for i, f := range queue {
		l.Queue = append(l.Queue, Queued{Ident: ident(f), Position: i + 1, Deadline: due[f]})
		delete(due, f)
	}
	for i := 0; i+1 < len(deadlines); i += 2 {
		if d, ok := due[deadlines[i]]; ok {
			l.Queue = append(l.Queue, Queued{Ident: ident(deadlines[i]), Deadline: d})
		}
	}
}

// micros reads a score in microseconds as a time.
func micros(score string) time.Time {
	us, _ := strconv.ParseFloat(score, 64)
	return time.UnixMicro(int64(us)).UTC()
}

// strs reads an array reply of strings.
func strs(v any) ([]string, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, errReply
	}
	s := make([]string, len(a))
	for i, e := range a {
		if s[i], ok = e.(string); !ok {
			return nil, errReply
		}
	}
	return s, nil
}

// readLeases reads the read leases: reader field, then the PTTLs of its
// read holds' keys.
func readLeases(v any) (map[string][]TTL, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, errReply
	}
	leases := make(map[string][]TTL, len(a)/2)
	for i := 0; i+1 < len(a); i += 2 {
		f, ok1 := a[i].(string)
		pttls, ok2 := a[i+1].([]any)
		if !ok1 || !ok2 {
			return nil, errReply
		}
		ttls := make([]TTL, len(pttls))
		for j, p := range pttls {
			ms, _ := p.(int64)
			ttls[j] = ttl(ms)
		}
		leases[f] = ttls
	}
	return leases, nil
}
