package semaphore

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/relock-go/relock/internal/core"
	"github.com/relock-go/relock/internal/lua"
)

// ackDelay is how long a grant's acknowledgement waits for a call on the
// semaphore to carry it before it is sent on its own: longer than most
// holds, so that the release which ends the hold usually carries it.
const ackDelay = 250 * time.Millisecond

// An ackKey names one semaphore on one client.
type ackKey struct{ client, name string }

// An ackBox holds the grants of one semaphore on one client that wait to
// be acknowledged, and the takes whose replies came.
type ackBox struct {
	members []string
	// takes are the records "t:<number>:<member>" of acquires that took
	// permits and whose replies came (internal/lua/semaphore_prelude.lua, "The
	// attempts"). They go with the next call, or with a flush, but never
	// on their own: a record left expires.
	takes []string
	// flush sends the box on its own after ackDelay, stopped when a call
	// takes the box first, so that a grant whose release carries its
	// acknowledgement leaves no timer to fire. It is nil while the box
	// holds no grant.
	flush *time.Timer
}

// acks holds the grants this process's waiters took whose records are
// still in Redis (internal/lua/semaphore_prelude.lua, "The grants"), by client
// and semaphore. The next acquire or release on that semaphore from that
// client, through any Semaphore value, takes them and its script removes
// the records; those no call took within ackDelay are sent by a script of
// their own, in the background (core.Client.Detach). A call that fails
// puts them back, to go with a later one: acknowledging twice changes
// nothing, and a grant must be acknowledged, or it is revoked ten
// seconds after it was made as if its waiter had died.
var acks = struct {
	mu sync.Mutex // guards m and its boxes' fields
	m  map[ackKey]*ackBox
}{m: map[ackKey]*ackBox{}}

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

func (s *Semaphore) addToBox(members, takes []string) {
	k := ackKey{s.c.ID, s.name}
	acks.mu.Lock()
	defer acks.mu.Unlock()
	b := acks.m[k]
	if b == nil {
		b = &ackBox{}
		acks.m[k] = b
	}
	if len(members) > 0 && b.flush == nil {
		b.flush = time.AfterFunc(ackDelay, func() { s.flushAcks(k, b) })
	}
	b.members = append(b.members, members...)
	b.takes = append(b.takes, takes...)
}

// takeAcks takes s's grants to acknowledge: nil for none.
func (s *Semaphore) takeAcks() *ackBox {
	k := ackKey{s.c.ID, s.name}
	acks.mu.Lock()
	b := acks.m[k]
	if b != nil {
		delete(acks.m, k)
		if b.flush != nil {
			b.flush.Stop()
		}
	}
	acks.mu.Unlock()
	return b
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
// (Once the client is closed, the flush finds the background refused and
// drops them.)
func (s *Semaphore) restoreAcks(b *ackBox) {
	if b != nil {
		s.addToBox(b.members, b.takes)
	}
}

// flushAcks sends box b's acknowledgements for k, unless a call took
// them already.
func (s *Semaphore) flushAcks(k ackKey, b *ackBox) {
	acks.mu.Lock()
	if acks.m[k] != b {
		acks.mu.Unlock()
		return
	}
	delete(acks.m, k)
	acks.mu.Unlock()
	s.c.Detach(context.Background(), core.HoldKey{Name: s.name}, func(ctx context.Context) {
		if _, err := core.Eval(ctx, s.c.Redis, lua.SemaphoreAck(), s.keys, s.c.PublishArg(), b.arg()); err != nil {
			s.restoreAcks(b)
		}
	})
}
