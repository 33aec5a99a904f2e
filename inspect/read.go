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
	"github.com/relock-go/relock/scripts"
)

// Read returns the state of the lock named name, read in one script: a
// consistent snapshot. rdb is any go-redis client (a *redis.Client, a
// failover client or a *redis.ClusterClient). A lock that does not exist
// is no error: its Kind is KindNone (see Lock.Exists). An invalid name is
// an error matching relock.ErrInvalidName, a nil rdb one matching
// relock.ErrInvalidArgument.
//
// Read returns by ctx's deadline: when rdb does not cut calls off there
// itself (go-redis's ContextTimeoutEnabled), Read reads through a
// connection of its own that does, and rdb's hooks do not see it; a
// caller that reads often (a watch loop) passes a client with
// ContextTimeoutEnabled, whose pooled connections are reused.
func Read(ctx context.Context, rdb redis.UniversalClient, name string) (*Lock, error) {
	if core.IsNil(rdb) {
		return nil, fmt.Errorf("inspect: nil redis client: %w", relock.ErrInvalidArgument)
	}
	if err := core.ValidateName(name); err != nil {
		return nil, fmt.Errorf("inspect: %w", err)
	}
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
	rdb, done := derive.Deadlines(rdb)
	defer done()
	reply, err := core.Eval(ctx, rdb, scripts.InspectRead(), keys, MaxReadLeases)
	if err != nil {
		return nil, fmt.Errorf("inspect: reading %q: %w", name, err)
	}
	l, err := decode(name, reply)
	if err != nil {
		return nil, fmt.Errorf("inspect: reading %q: unexpected reply %v: %w", name, reply, err)
	}
	return l, nil
}

// decode builds a Lock from inspect_read.lua's reply.
func decode(name string, reply any) (*Lock, error) {
	r, ok := reply.([]any)
	if !ok || len(r) != 9 {
		return nil, errReply
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
		return nil, err
	}
	if len(now) != 2 {
		return nil, errReply
	}
	l := &Lock{
		Name:    name,
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
	l.setRecord(kind, fields, leases)
	l.setQueue(queue, deadlines)
	for i := 0; i+1 < len(waiters); i += 2 {
		field, fenced := strings.CutPrefix(waiters[i], "f:")
		l.Waiters = append(l.Waiters, Waiter{Ident: ident(field), Fenced: fenced, Since: micros(waiters[i+1])})
	}
	return l, nil
}

var errReply = errors.New("not the script's shape")

// setRecord reads the lock key: its type and, for a hash, its fields
// (flat, field then value) and a read/write lock's read leases.
func (l *Lock) setRecord(kind string, fields []string, leases map[string][]TTL) {
	switch kind {
	case "none":
		l.Kind = KindNone
		return
	case "hash":
	default:
		l.Kind, l.Type = KindOther, kind
		return
	}
	l.Kind = KindLock
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == "mode" {
			l.Kind, l.Mode = KindRWLock, fields[i+1]
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
