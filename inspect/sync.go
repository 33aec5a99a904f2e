package inspect

import (
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// MaxListed bounds the permits and semaphore waiters Read lists, and so
// the work of one Read.
const MaxListed = 1000

// MaxHistory bounds the election changes Read returns, newest first.
const MaxHistory = 20

// noLease is the score Redisson gives a permit without a lease.
const noLease = 922337203685477

// A Permit is a permit held of an expirable semaphore (KindPermits).
// Permits have no owner in Redis: which client holds one, only the
// holder knows.
type Permit struct {
	// ID is the permit's id, 32 lower-case hex digits, as Redisson and
	// package permits show it.
	ID string `json:"id"`
	// Expiry is when the permit's lease ends, by the clock of the client
	// that set it (relock's: the server's); zero for a permit without a
	// lease.
	Expiry time.Time `json:"expiry,omitzero"`
	// TTL is the time left on the lease at ServerTime: negative once it
	// passed and the permit awaits reclaiming, NoExpiry without a lease.
	TTL TTL `json:"ttl_ms"`
}

// A SemaphoreWaiter is a relock waiter registered on a semaphore or an
// expirable semaphore.
type SemaphoreWaiter struct {
	// Member is the registry's member, "<client id>:<tag>:<permits>".
	Member string `json:"member"`
	// ClientID is the waiting client's id.
	ClientID string `json:"client_id"`
	// Tag is the waiter's number on its client, "g<n>" for a semaphore's
	// waiter and "p<n>" for an expirable semaphore's.
	Tag string `json:"tag"`
	// Permits is how many permits it waits for.
	Permits int64 `json:"permits"`
	// Since is when it first waited, by the server's clock; zero for a
	// waiter that was woken (Woken).
	Since time.Time `json:"since,omitzero"`
	// Woken is the deadline by which a woken expirable-semaphore waiter
	// must try again, its permits reserved until then; zero otherwise.
	Woken time.Time `json:"woken_until,omitzero"`
}

// An Election is the state of relock's election of a name.
type Election struct {
	// Term is the term counter: the last term drawn.
	Term int64 `json:"term"`
	// Leader is the current leader, nil when there is none (none was
	// elected, the last resigned, or its lease ran out).
	Leader *Leader `json:"leader,omitempty"`
	// Candidates are the candidates waiting, in the election lock's fair
	// queue, next first.
	Candidates []Queued `json:"candidates"`
	// History is the last changes of leader or value, newest first; at
	// most MaxHistory.
	History []Change `json:"history"`
	// Lock is the election's fair lock, relock_election:{<name>}, as
	// Read shows a lock.
	Lock *Lock `json:"-"`
}

// A Leader leads an election.
type Leader struct {
	Ident
	// Value is what the leader proclaimed last.
	Value string `json:"value"`
	// Term is its term.
	Term int64 `json:"term"`
	// Since is when it was elected, by the server's clock, read from the
	// change log; zero when the log no longer has its election.
	Since time.Time `json:"since,omitzero"`
	// TTL is the time left on the leader's lease.
	TTL TTL `json:"ttl_ms"`
}

// A Change is an entry of an election's change log: an election, or a
// leader's new value.
type Change struct {
	Term  int64     `json:"term"`
	Value string    `json:"value"`
	At    time.Time `json:"at"`
}

// syncState is inspect_sync.lua's reply, decoded.
type syncState struct {
	value, term string
	hasValue    bool
	permits     []string // flat: raw id, score
	waiters     []string // flat: member, score
	grants      int64
	watcher     bool
	leader      map[string]string
	log         []Change
}

// decodeSync reads inspect_sync.lua's reply.
func decodeSync(reply any) (*syncState, error) {
	r, ok := reply.([]any)
	if !ok || len(r) != 8 {
		return nil, errReply
	}
	s := &syncState{}
	s.value, s.hasValue = r[0].(string)
	s.term, _ = r[6].(string)
	var err1, err2, err3 error
	s.permits, err1 = strs(r[1])
	s.waiters, err2 = strs(r[2])
	s.grants, _ = r[3].(int64)
	s.watcher = r[4] == int64(1)
	leader, err3 := strs(r[5])
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	s.leader = make(map[string]string, len(leader)/2)
	for i := 0; i+1 < len(leader); i += 2 {
		s.leader[leader[i]] = leader[i+1]
	}
	entries, ok := r[7].([]any)
	if !ok {
		return nil, errReply
	}
	for _, e := range entries {
		c, ok := change(e)
		if !ok {
			return nil, errReply
		}
		s.log = append(s.log, c)
	}
	return s, nil
}

// change reads a stream entry, {id, {field, value, ...}}; the id's first
// part is the server's time in ms when it was added.
func change(e any) (Change, bool) {
	pair, ok := e.([]any)
	if !ok || len(pair) != 2 {
		return Change{}, false
	}
	id, _ := pair[0].(string)
	fields, err := strs(pair[1])
	if err != nil {
		return Change{}, false
	}
	ms, _, _ := strings.Cut(id, "-")
	at, _ := strconv.ParseInt(ms, 10, 64)
	c := Change{At: time.UnixMilli(at).UTC()}
	for i := 0; i+1 < len(fields); i += 2 {
		switch fields[i] {
		case "term":
			c.Term, _ = strconv.ParseInt(fields[i+1], 10, 64)
		case "value":
			c.Value = fields[i+1]
		}
	}
	return c, true
}

// setSync fills in the synchronizers' state.
func (l *Lock) setSync(s *syncState) {
	if n, err := strconv.ParseInt(s.value, 10, 64); err == nil && s.hasValue {
		l.Count = &n
	}
	for i := 0; i+1 < len(s.permits); i += 2 {
		p := Permit{ID: hex.EncodeToString([]byte(s.permits[i])), TTL: NoExpiry}
		ms, _ := strconv.ParseFloat(s.permits[i+1], 64)
		if int64(ms) < noLease {
			p.Expiry = time.UnixMilli(int64(ms)).UTC()
			p.TTL = TTL(p.Expiry.Sub(l.ServerTime).Round(time.Millisecond))
		}
		l.Permits = append(l.Permits, p)
	}
	for i := 0; i+1 < len(s.waiters); i += 2 {
		l.SemaphoreWaiters = append(l.SemaphoreWaiters, semaphoreWaiter(s.waiters[i], s.waiters[i+1]))
	}
	l.Grants = s.grants
	if s.term == "" {
		return
	}
	e := &Election{Candidates: []Queued{}, History: s.log}
	if e.History == nil {
		e.History = []Change{}
	}
	e.Term, _ = strconv.ParseInt(s.term, 10, 64)
	if field, ok := s.leader["field"]; ok {
		term, _ := strconv.ParseInt(s.leader["term"], 10, 64)
		e.Leader = &Leader{Ident: ident(field), Value: s.leader["value"], Term: term, TTL: NoKey}
		for _, c := range e.History {
			if c.Term == term {
				e.Leader.Since = c.At // the log is newest first: this ends at the election
			}
		}
	}
	l.Election = e
}

// semaphoreWaiter reads a registry member and its score: the time it
// first waited in server µs, or minus the deadline of a woken waiter.
func semaphoreWaiter(member, score string) SemaphoreWaiter {
	w := SemaphoreWaiter{Member: member}
	if i := strings.LastIndexByte(member, ':'); i > 0 {
		w.Permits, _ = strconv.ParseInt(member[i+1:], 10, 64)
		w.ClientID, w.Tag, _ = strings.Cut(member[:i], ":")
	}
	if strings.HasPrefix(score, "-") {
		w.Woken = micros(score[1:])
	} else {
		w.Since = micros(score)
	}
	return w
}

// setElectionLock sets the election's lock, and with it its leader's
// lease and its candidates; a leader that no longer holds the lock is
// none.
func (e *Election) setElectionLock(lock *Lock) {
	e.Lock = lock
	e.Candidates = lock.Queue
	if e.Leader == nil {
		return
	}
	for _, h := range lock.Holders {
		if h.Field == e.Leader.Field {
			e.Leader.TTL = lock.TTL
			return
		}
	}
	e.Leader = nil
}
