package inspect

import (
	"strconv"
	"strings"

	"github.com/relock-go/relock/internal/layout"
)

// Kind is the kind of record kept under a name.
type Kind string

// The kinds of record. A record's kind is what Redis keeps of it that
// lasts: it does not change with the record's state, whoever holds or
// waits. Redis cannot tell every primitive apart: a spin lock and a
// non-reentrant lock keep the reentrant lock's hash (and a fair lock too,
// whose queue keys exist only while someone waits, or until they expire
// after their waiters are gone), and a semaphore, an expirable semaphore
// and a latch all keep an integer (KindCount), told apart only while
// someone holds or waits (Lock.Use).
const (
	// KindNone: nothing under the name.
	KindNone Kind = "none"
	// KindLock: a hash of owner fields and hold counts, the record of a
	// reentrant, fenced, fair, spin or non-reentrant lock (Redisson's
	// RLock, RFencedLock, RFairLock, RSpinLock,
	// RedissonNonReentrantLock), or a fair lock's queue keys without
	// that hash (nobody holds the lock). Lock.Fair tells a fair lock's
	// queue while it has one.
	KindLock Kind = "lock"
	// KindRWLock: a hash with a "mode" field, a read/write lock
	// (Redisson's RReadWriteLock).
	KindRWLock Kind = "rwlock"
	// KindGroup: a hash of values locked together, each by a holder with
	// its expiry and hold count (Redisson's RedissonFasterMultiLock,
	// package grouplock); Lock.Holders name the values they hold by their
	// fields, and Lock.NameValues by the values.
	KindGroup Kind = "group"
	// KindCount: a string holding an integer (Lock.Count): a
	// semaphore's available permits (Redisson's RSemaphore), an
	// expirable semaphore's (RPermitExpirableSemaphore), a latch's count
	// (RCountDownLatch), or another application's counter. Lock.Use
	// tells which while someone holds permits or waits.
	KindCount Kind = "count"
	// KindElection: relock's election (Lock.Election): a term counter
	// with, while someone leads, a leader record.
	KindElection Kind = "election"
	// KindFencing: a lock's fencing counter (Lock.Token),
	// redisson_lock_token:{<name>}, listed under the lock's name.
	KindFencing Kind = "fencing"
	// KindFence: the last token package fence's Redis guard recorded for
	// a resource (Lock.Fence), relock's relock_fence:{<resource>},
	// listed under the resource's name.
	KindFence Kind = "fence"
	// KindOther: a key of another type or shape (Lock.Type).
	KindOther Kind = "other"
)

// The uses of a count (KindCount) that its state shows, in Lock.Use:
// they last only while someone holds permits or waits. They are no
// record's kind.
const (
	// KindPermits: an expirable semaphore's count while permits are held
	// (Lock.Permits).
	KindPermits Kind = "permits"
	// KindSemaphore: a semaphore's count while relock's semaphore
	// records exist (its waiters, grants or watcher) or anyone listens on
	// the semaphore's channel.
	KindSemaphore Kind = "semaphore"
	// KindLatch: a latch's count while anyone listens on the latch's
	// channel.
	KindLatch Kind = "latch"
)

// A shape is what a kind is recognised by: the Redis type of the key at
// the name and a first look at its content.
type shape struct {
	typ    string   // TYPE of the key at the name
	fields []string // a hash's fields, flat (field, value), or a first HSCAN of them
	value  string   // a string's value
}

// recordRules tell the kind of the key at a name, tried in order: the
// first that matches wins, and a key none matches is KindOther. This
// table is the one place a new kind of record is recognised; a kind kept
// under derived keys only (an election, a fencing counter, a fence
// guard's token) is added to keyRules as well. A rule looks only at what
// lasts, so that a record keeps its kind whatever its state (useOf tells
// a count's use).
var recordRules = []struct {
	kind Kind
	is   func(s *shape) bool
}{
	{KindRWLock, func(s *shape) bool { return s.typ == "hash" && lockFields(s.fields) && hasMode(s.fields) }},
	{KindLock, func(s *shape) bool { return s.typ == "hash" && lockFields(s.fields) }},
	{KindGroup, func(s *shape) bool { return s.typ == "hash" && groupFields(s.fields) }},
	{KindCount, integer},
}

// usage is what tells a count's use while it lasts.
type usage struct {
	permits   bool // PermitTimeouts(name) exists: permits are held
	semaphore bool // relock's semaphore records exist, or someone listens on SemaphoreChannel
	latch     bool // someone listens on LatchChannel
}

// useOf tells a count's use from u, "" when nothing does.
func useOf(u usage) Kind {
	switch {
	case u.permits:
		return KindPermits
	case u.semaphore:
		return KindSemaphore
	case u.latch:
		return KindLatch
	}
	return ""
}

// kindOf applies recordRules.
func kindOf(s *shape) Kind {
	if s.typ == "none" {
		return KindNone
	}
	for _, r := range recordRules {
		if r.is(s) {
			return r.kind
		}
	}
	return KindOther
}

func integer(s *shape) bool {
	_, err := strconv.ParseInt(s.value, 10, 64)
	return s.typ == "string" && err == nil
}

// groupFields reports a group lock's fields (flat, field then value):
// "<value>" = "<client id>:<owner>", and for each holder of a value
// "<value>:<holder>:expire_time" and "<value>:<holder>:lock_count", both
// integers.
func groupFields(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	for i := 0; i+1 < len(fields); i += 2 {
		f, v := fields[i], fields[i+1]
		if strings.HasSuffix(f, ":expire_time") || strings.HasSuffix(f, ":lock_count") {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return false
			}
			continue
		}
		if !ownerField(v) {
			return false
		}
	}
	return true
}

func hasMode(fields []string) bool {
	for i := 0; i+1 < len(fields); i += 2 {
		if fields[i] == "mode" {
			return true
		}
	}
	return false
}

// keyRules tell what a key that List or Doctor finds belongs to when it
// derives from a name (layout's functions), tried in order. A record
// (companion false) is listed under the name with its kind; a companion
// is part of the record at its name, which Doctor reads and List skips.
// Keys no rule derives are looked at as records at their own name
// (recordRules).
var keyRules = []struct {
	derive    func(name string) string
	kind      Kind
	companion bool
}{
	{layout.ElectionTerm, KindElection, false},
	{layout.ElectionLeader, KindElection, true},
	{layout.ElectionLog, KindElection, true},
	{layout.LockToken, KindFencing, false},
	{layout.FenceLast, KindFence, false},
	// A fair lock's queue keys are its record too: they may outlive its
	// hash, and a queue nobody holds the lock of must be listed.
	{layout.FairQueue, KindLock, false},
	{layout.FairTimeouts, KindLock, false},
	{layout.LockWaiters, KindLock, true},
	{layout.LockGone, KindLock, true},
	{layout.LockGoneDue, KindLock, true},
	{layout.SemaphoreWaiters, KindCount, true},
	{layout.SemaphoreGrants, KindCount, true},
	{layout.SemaphoreAttempts, KindCount, true},
	{layout.SemaphoreWatcher, KindCount, true},
	{layout.PermitTimeouts, KindCount, true},
	{layout.PermitsGone, KindCount, true},
}

// derived reports the name and kind key derives from by keyRules. A key
// that is a lock's companion of no interest (a read hold's key,
// Redisson's unlock latch) is a companion of nothing: name "".
func derived(key string) (name string, kind Kind, companion, ok bool) {
	for _, r := range keyRules {
		if n, ok := nameOf(r.derive, key); ok {
			return n, r.kind, r.companion, true
		}
	}
	if layout.LockCompanion(key) {
		return "", "", true, true
	}
	return "", "", false, false
}

// nameOf inverts derive, one of layout's functions of a name: it returns
// the name from which derive makes key. It finds where derive puts the
// name by deriving from a sample, undoes the hash-tag rule's braces, and
// checks by deriving again, so that it follows layout exactly.
func nameOf(derive func(string) string, key string) (string, bool) {
	const sample = "n{t}"
	d := derive(sample)
	i := strings.Index(d, sample)
	if i < 0 {
		return "", false
	}
	pre, post := d[:i], d[i+len(sample):]
	if len(key) <= len(pre)+len(post) || !strings.HasPrefix(key, pre) || !strings.HasSuffix(key, post) {
		return "", false
	}
	mid := key[len(pre) : len(key)-len(post)]
	for _, name := range []string{unwrap(mid), mid} {
		if name != "" && derive(name) == key {
			return name, true
		}
	}
	return "", false
}

// unwrap removes the braces the hash-tag rule wraps a name in, if any.
func unwrap(s string) string {
	if inner, ok := strings.CutPrefix(s, "{"); ok {
		if inner, ok = strings.CutSuffix(inner, "}"); ok && !strings.ContainsAny(inner, "{}") {
			return inner
		}
	}
	return ""
}
