package inspect

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/relock-go/relock/grouplock"
	"github.com/relock-go/relock/internal/core"
)

// A Lock is what Read found under one name: a lock's state, or a
// group lock's, a count's (a semaphore's, an expirable semaphore's, a
// latch's), an election's, a fencing counter's or a fence guard's token
// (Kind).
// Every slice of a lock's is non-nil, so that JSON shows an empty list
// as [].
// A nil *Lock is a missing one: Exists and Held report false,
// NameValues nil.
type Lock struct {
	// Name is the name, which is the Redis key of its record.
	Name string `json:"name"`
	// Kind is the kind of record under the name: the key at the name's,
	// or else KindElection, KindFencing or KindFence when only those
	// exist. It does not change with the record's state.
	Kind Kind `json:"kind"`
	// Use is what a count's state shows it used as now (KindCount only):
	// KindPermits, KindSemaphore or KindLatch while someone holds
	// permits or waits, "" when nothing tells (a semaphore or latch nobody
	// waits on, or another application's counter).
	Use Kind `json:"use,omitempty"`
	// ElectionOf names the election whose candidates' fair lock this is,
	// for relock's own lock relock_election:{<election>}.
	ElectionOf string `json:"election_of,omitempty"`
	// Type is the Redis type of a key that is no lock record (KindOther).
	Type string `json:"type,omitempty"`
	// TTL is the time left on the lock's lease.
	TTL TTL `json:"ttl_ms"`
	// Mode is a read/write lock's mode: "read" or "write".
	Mode string `json:"mode,omitempty"`
	// Fair reports a fair lock's queue keys: someone waits, or waited,
	// in arrival order. They may outlive the lock's hash: a name with
	// them alone is a KindLock nobody holds.
	Fair bool `json:"fair"`
	// QueueTTL is the time left on a fair lock's queue keys (the later
	// of the two), when Fair: relock's scripts have them expire a
	// second after the latest deadline in them; NoExpiry for keys only
	// Redisson wrote since they were made (docs/wire-layout.md).
	QueueTTL TTL `json:"queue_ttl_ms,omitempty"`
	// Holders hold the lock: one for a mutex, the readers (and a writer
	// that took read holds) of a read/write lock. The writer comes first,
	// then the others by field.
	Holders []Holder `json:"holders"`
	// Queue is a fair lock's queue, head first.
	Queue []Queued `json:"queue"`
	// Waiters are relock's waiters registered on a reentrant lock, the
	// longest-registered first: the one a release tells.
	Waiters []Waiter `json:"waiters"`
	// Token is the fencing counter's value, the last token drawn; 0 when
	// the lock has never been taken with fencing.
	Token int64 `json:"fencing_token,omitempty"`
	// Count is the integer at the name (KindCount): a semaphore's
	// available permits or a latch's count.
	Count *int64 `json:"count,omitempty"`
	// Permits are an expirable semaphore's permits held, the earliest
	// expiry first; at most MaxListed.
	Permits []Permit `json:"permits,omitempty"`
	// SemaphoreWaiters are relock's waiters registered on a semaphore or
	// an expirable semaphore, the longest waiting first; at most
	// MaxListed.
	SemaphoreWaiters []SemaphoreWaiter `json:"semaphore_waiters,omitempty"`
	// Grants counts the permits handed to relock's semaphore waiters and
	// not yet acknowledged (and revoked grants kept as tombstones).
	Grants int64 `json:"grants,omitempty"`
	// Election is the election of this name, when it has a term counter.
	Election *Election `json:"election,omitempty"`
	// Fence is the last token package fence's Redis guard recorded for
	// the resource of this name (relock_fence:{<name>}); 0 when none was.
	Fence int64 `json:"fence_token,omitempty"`
	// ServerTime is the Redis server's clock when the state was read.
	ServerTime time.Time `json:"server_time"`
}

// Exists reports whether Redis has anything under the name: a record, a
// queue, registered waiters, a fencing counter, a fence guard's token or
// an election.
func (l *Lock) Exists() bool {
	if l == nil {
		return false
	}
	return l.Kind != KindNone || len(l.Queue) > 0 || len(l.Waiters) > 0 || l.Token != 0 || l.Fence != 0 ||
		len(l.SemaphoreWaiters) > 0 || len(l.Permits) > 0 || l.Election != nil
}

// Held reports a record with an owner that holds it: a lock with
// holders, a permit held, or an election's leader.
func (l *Lock) Held() bool {
	if l == nil {
		return false
	}
	return len(l.Holders) > 0 || len(l.Permits) > 0 || (l.Election != nil && l.Election.Leader != nil)
}

// An Ident names a holder or waiter by its hash field,
// "<client id>:<owner>".
type Ident struct {
	// Field is the field as Redis has it (without a read/write lock
	// writer's ":write" suffix).
	Field string `json:"field"`
	// ClientID is the client's UUID, the part before the owner.
	ClientID string `json:"client_id"`
	// Owner is relock's owner number or Redisson's thread id.
	Owner string `json:"owner"`
	// Library is what wrote the field, told by the client id's UUID
	// version.
	Library Library `json:"library"`
}

// Library is the client library an owner field comes from.
type Library string

// The libraries an Ident can name.
const (
	// Relock: a version-8 client id, a relock.Client.
	Relock Library = "relock"
	// Redisson: a version-4 client id, Redisson's connection manager.
	Redisson Library = "redisson"
	// Unknown: a field that is not "<UUID>:<owner>" with either version.
	Unknown Library = "unknown"
)

// ident splits field into client id and owner. A field that does not
// start with a UUID is split at its last colon, if any.
func ident(field string) Ident {
	id := Ident{Field: field, Library: Unknown}
	if len(field) > 37 && field[36] == ':' {
		if u, err := uuid.Parse(field[:36]); err == nil {
			id.ClientID, id.Owner = field[:36], field[37:]
			switch u.Version() {
			case 8:
				id.Library = Relock
			case 4:
				id.Library = Redisson
			}
			return id
		}
	}
	if i := strings.LastIndexByte(field, ':'); i >= 0 {
		id.ClientID, id.Owner = field[:i], field[i+1:]
	}
	return id
}

// A Holder holds a lock.
type Holder struct {
	Ident
	// Holds counts the owner's holds: Lock calls not yet unlocked. For a
	// read/write lock's writer, its write holds.
	Holds int64 `json:"holds"`
	// Write marks a read/write lock's writer.
	Write bool `json:"write,omitempty"`
	// ReadLeases are a reader's leases: the TTL of read hold i's own key
	// at index i-1 (NoKey for a hold whose lease ran out). Only the first
	// MaxReadLeases holds are read.
	ReadLeases []TTL `json:"read_leases,omitempty"`
	// Values are the fields a group lock's holder holds (KindGroup):
	// Redisson's hashes of the values (grouplock.Codec.Field), Holds the
	// most holds of any of them. Redis keeps no value itself.
	Values []string `json:"values,omitempty"`
	// ValueNames are the values of Values that Lock.NameValues was given,
	// index for index: "" for a field none of them hashes to.
	ValueNames []string `json:"value_names,omitempty"`
}

// NameValues names a group lock's values (KindGroup): each of values
// whose field under codec (grouplock's Codec.Field, as the group's
// clients hash it) a holder holds is set in that holder's ValueNames. It
// returns the values no holder holds, in the order given.
func (l *Lock) NameValues(codec grouplock.Codec, values []string) (notHeld []string) {
	if l == nil {
		return nil
	}
	byField := make(map[string]string, len(values))
	for _, v := range values {
		byField[codec.Field(v)] = v
	}
	named := make(map[string]bool, len(values))
	for i := range l.Holders {
		h := &l.Holders[i]
		h.ValueNames = make([]string, len(h.Values))
		for j, f := range h.Values {
			if v, ok := byField[f]; ok {
				h.ValueNames[j], named[v] = v, true
			}
		}
	}
	for _, v := range values {
		if !named[v] {
			notHeld = append(notHeld, v)
		}
	}
	return notHeld
}

// MaxReadLeases bounds the read holds of one reader whose leases Read
// reports, and so the work of one Read.
const MaxReadLeases = 100

// Queued is a waiter in a fair lock's queue.
type Queued struct {
	Ident
	// Position is the waiter's place, 1 for the head; 0 for a waiter
	// with a deadline but no place, which a fair lock's next acquire
	// queues again or drops.
	Position int `json:"position"`
	// Deadline is when the waiter may be dropped if it has not retried:
	// epoch milliseconds from its client's clock (the server's, for
	// relock). Zero when it has none.
	Deadline time.Time `json:"deadline,omitzero"`
}

// A Waiter is a relock waiter registered on a reentrant lock.
type Waiter struct {
	Ident
	// Fenced marks a waiter that wants a fencing token: a release wakes
	// it to try rather than granting it the lock.
	Fenced bool `json:"fenced,omitempty"`
	// Since is when it first found the lock taken, by the server's clock.
	Since time.Time `json:"since"`
}

// TTL is the time a key has left, as PTTL reports it, with two special
// values. In JSON it is a number of milliseconds, -1 for NoExpiry and -2
// for NoKey. UnmarshalJSON into a nil *TTL returns an error matching
// relock.ErrInvalidArgument.
type TTL time.Duration

// errNilTTL is the error of every operation of a nil *TTL.
var errNilTTL = core.NilReceiver("inspect", "TTL")

// The special TTLs.
const (
	NoExpiry TTL = -1 // the key has no expiry
	NoKey    TTL = -2 // there is no key
)

// ttl converts a PTTL reply.
func ttl(ms int64) TTL {
	switch {
	case ms == -1:
		return NoExpiry
	case ms < 0:
		return NoKey
	}
	return TTL(time.Duration(ms) * time.Millisecond)
}

// String renders a TTL to the millisecond, "no expiry" for a key
// without one, or "-" where there is no key (nothing to expire).
func (t TTL) String() string {
	switch t {
	case NoExpiry:
		return "no expiry"
	case NoKey:
		return "-"
	}
	return time.Duration(t).Round(time.Millisecond).String()
}

// MarshalJSON renders the TTL in milliseconds.
func (t TTL) MarshalJSON() ([]byte, error) {
	if t == NoExpiry || t == NoKey {
		return json.Marshal(int64(t))
	}
	return json.Marshal(time.Duration(t).Milliseconds())
}

// UnmarshalJSON reads what MarshalJSON writes.
func (t *TTL) UnmarshalJSON(b []byte) error {
	if t == nil {
		return errNilTTL
	}
	var ms int64
	if err := json.Unmarshal(b, &ms); err != nil {
		return err
	}
	*t = ttl(ms)
	return nil
}
