package semaphore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/lua"
	"github.com/relock-go/relock/internal/transport"
)

// ackDelay is how long a grant's acknowledgement waits for a call on the
// semaphore to carry it before it is sent on its own: longer than most
// holds, so that the release which ends the hold usually carries it.
const ackDelay = 250 * time.Millisecond

// An ackBox holds the grants of one semaphore on one client that wait to
// be acknowledged, and the takes whose replies came.
type ackBox struct {
	members []string
	// takes are the records "t:<number>:<member>" of acquires that took
	// permits and whose replies came (internal/lua/semaphore_prelude.lua, "The
	// attempts"). They go with the next call, or with a flush, but never
	// on their own: a record left expires.
	takes []string
	// timer ends the box. While it holds grants, it sends the box on
	// its own after ackDelay, stopped when a call takes the box first,
	// so that a grant whose release carries its acknowledgement leaves
	// no timer to fire. While it holds takes only, it drops the box once
	// the records of its takes have expired in Redis (the client's
	// watchdog timeout after the last take came): the semaphore released
	// on another client, or not used again here, leaves nothing here.
	timer *time.Timer
}

// acks holds the grants this process's waiters took whose records are
// still in Redis (internal/lua/semaphore_prelude.lua, "The grants"), by client
// ID and semaphore name. The next acquire or release on that semaphore
// from that client, through any Semaphore value, takes them and its
// script removes the records; those no call took within ackDelay are
// sent by a script of their own, in the background (core.Client.Detach).
// A call that fails puts them back, to go with a later one:
// acknowledging twice changes nothing, and a grant must be acknowledged,
// or it is revoked ten seconds after it was made as if its waiter had
// died.
//
// A box leaves m when a call takes it, when its timer ends it, and with
// its client's Close (core.Client.AtClose), which drops what a flush
// would then drop too: a closed client sends nothing. A client leaves m
// with its last box. m thus holds, for each open client, the semaphores
// with grants less than ackDelay old or takes less than a watchdog
// timeout old.
var acks = struct {
	mu sync.Mutex // guards m and its boxes' fields
	m  map[string]map[string]*ackBox
}{m: map[string]map[string]*ackBox{}}

// addAck records that members, waiters of s, took the permits handed to
// them.
func (s *Semaphore) addAck(members ...string) {
	s.addToBox(members, nil)
}

// addTakes records that the replies of takes came, so that the next
// call removes their records.
func (s *Semaphore) addTakes(takes ...string) {
	s.addToBox(nil, takes)
}

// addToBox adds members and takes to s's box, unless s's client is
// closed.
func (s *Semaphore) addToBox(members, takes []string) {
	id := s.c.ID
	acks.mu.Lock()
	defer acks.mu.Unlock()
	if !s.c.AtClose(&acks, func() { forgetClient(id) }) {
		return
	}
	boxes := acks.m[id]
	if boxes == nil {
		boxes = make(map[string]*ackBox)
		acks.m[id] = boxes
	}
	b := boxes[s.name]
	if b == nil {
		b = &ackBox{}
		boxes[s.name] = b
	}
	switch {
	case len(members) > 0 && len(b.members) == 0:
		b.startTimer(ackDelay, func() { s.endBox(b) })
	case len(members) == 0 && len(b.members) == 0:
		b.startTimer(s.c.WatchdogTimeout, func() { s.endBox(b) })
	}
	b.members = append(b.members, members...)
	b.takes = append(b.takes, takes...)
}

// startTimer sets b's timer to run f after d. A timer that already fired
// may run f twice: endBox ends a box once.
func (b *ackBox) startTimer(d time.Duration, f func()) {
	if b.timer == nil {
		b.timer = time.AfterFunc(d, f)
		return
	}
	b.timer.Reset(d)
}

// takeAcks takes s's grants to acknowledge: nil for none.
func (s *Semaphore) takeAcks() *ackBox {
	acks.mu.Lock()
	defer acks.mu.Unlock()
	b := acks.m[s.c.ID][s.name]
	if b != nil {
		b.timer.Stop()
		removeLocked(s.c.ID, s.name)
	}
	return b
}

// removeLocked removes the box of semaphore name on client id from
// acks.m, and the client with its last box.
func removeLocked(id, name string) {
	boxes := acks.m[id]
	delete(boxes, name)
	if len(boxes) == 0 {
		delete(acks.m, id)
	}
}

// forgetClient drops the boxes of the client with ID id, which closed.
func forgetClient(id string) {
	acks.mu.Lock()
	defer acks.mu.Unlock()
	for _, b := range acks.m[id] {
		b.timer.Stop()
	}
	delete(acks.m, id)
}

// arg is the scripts' acknowledgement argument for b: its members and
// takes separated by ",", "" for none.
func (b *ackBox) arg() string {
	switch {
	case b == nil:
		return ""
	case len(b.takes) == 0:
		return strings.Join(b.members, ",")
	}
	return strings.Join(append(b.members[:len(b.members):len(b.members)], b.takes...), ",")
}

// restoreAcks puts back acknowledgements b that a failed call took.
// (Once the client is closed, addToBox drops them.)
func (s *Semaphore) restoreAcks(b *ackBox) {
	if b != nil {
		s.addToBox(b.members, b.takes)
	}
}

// endBox ends box b of s at its timer, unless a call took it already:
// it sends b's acknowledgements, or drops b if it holds takes only, whose
// records have expired.
func (s *Semaphore) endBox(b *ackBox) {
	acks.mu.Lock()
	if acks.m[s.c.ID][s.name] != b {
		acks.mu.Unlock()
		return
	}
	removeLocked(s.c.ID, s.name)
	grants := len(b.members) > 0
	acks.mu.Unlock()
	if !grants {
		return
	}
	s.c.Detach(context.Background(), core.HoldKey{Name: s.name}, func(ctx context.Context) {
		if _, err := transport.Eval(ctx, s.c.Redis, lua.SemaphoreAck(), s.keys, s.c.T.PublishArg(), b.arg()); err != nil {
			s.restoreAcks(b)
		}
	})
}
