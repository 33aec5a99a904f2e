package inspect

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/derive"
	"github.com/relock-go/relock/internal/layout"
	"github.com/relock-go/relock/internal/transport"
)

// DoctorOptions configure Doctor. A nil *DoctorOptions and zero fields
// mean the defaults.
type DoctorOptions struct {
	// Pattern selects the names looked at, a glob as SCAN MATCH takes it;
	// "" means every name.
	Pattern string
	// Old is the age past which a hold or a wait is reported; 10 minutes
	// by default.
	Old time.Duration
	// Lease is the lease the holders renew to: relock's and Redisson's
	// WatchdogTimeout, 30 seconds by default. A watchdog renews every
	// third of it, so a renewed hold's TTL stays above two thirds of it.
	Lease time.Duration
	// Seen is Report.Seen of an earlier run: when each hold was first
	// seen. Nothing in Redis records when a lock or a permit was taken,
	// so a hold's age is known only from when a run first saw it.
	Seen map[string]time.Time
}

// The defaults of DoctorOptions.
const (
	DefaultOld   = 10 * time.Minute
	DefaultLease = 30 * time.Second
)

// A Problem is a kind of finding.
type Problem string

// The problems Doctor reports.
const (
	// OldHold: a hold first seen (DoctorOptions.Seen) longer ago than
	// Old.
	OldHold Problem = "old-hold"
	// LongWait: a relock waiter registered longer ago than Old: whoever
	// holds the lock has held it, or it has changed hands past the
	// waiter, that long.
	LongWait Problem = "long-wait"
	// HolderQueued: a fair lock's holder is also in its queue: its
	// Unlock would hand the lock back to itself, and the waiters behind
	// it would wait a lease (relock before v0.1.0 left its waiter so
	// when the holder and the waiters ahead had crashed).
	HolderQueued Problem = "holder-queued"
	// NotRenewed: a held lock or permit whose TTL is below what a
	// watchdog renewal leaves (two thirds of Lease, less a tenth of it
	// for the renewal's own delay), or a held lock without expiry. A hold
	// taken with a fixed lease shows so too, as its lease runs down.
	NotRenewed Problem = "not-renewed"
	// StaleQueueEntry: a fair-queue entry whose waiter deadline passed;
	// the next acquire drops it, and when none comes the queue keys
	// expire (Lock.QueueTTL).
	StaleQueueEntry Problem = "stale-queue-entry"
	// GoneWaiter: a waiter (relock's registry, a fair queue, a semaphore's
	// registry) whose channel nobody listens on: its client is gone.
	GoneWaiter Problem = "gone-waiter"
	// ExpiredPermit: an expirable permit past its lease, not yet
	// reclaimed (the next call on the semaphore reclaims it).
	ExpiredPermit Problem = "expired-permit"
	// Deadlock: owners that each hold a lock another of them waits for,
	// in a cycle: none can go on until a lease ends.
	Deadlock Problem = "deadlock"
)

// A Finding is one thing Doctor found wrong.
type Finding struct {
	Problem Problem `json:"problem"`
	// Name is the record's name; for a deadlock, its first lock's.
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Owners are the owner fields involved ("<client id>:<owner>"), a
	// permit's id, or a semaphore waiter's registry member; for a
	// deadlock, the owners of the cycle in order.
	Owners []string `json:"owners"`
	// Locks are a deadlock's locks: Owners[i] waits for Locks[i], held by
	// Owners[i+1] (the last by Owners[0]).
	Locks []string `json:"locks,omitempty"`
	// Age is how long the hold or wait has lasted, when known.
	Age time.Duration `json:"age_ns,omitempty"`
	// TTL is the hold's time left, for NotRenewed, ExpiredPermit and
	// GoneHolder; the queue keys' for OrphanedQueue.
	TTL TTL `json:"ttl_ms,omitempty"`
	// Detail says what was found in one line.
	Detail string `json:"detail"`
}

// A Report is what Doctor found.
type Report struct {
	// Findings, by problem then name.
	Findings []Finding `json:"findings"`
	// Records counts the records found, of every kind, as Find finds
	// them (and relock list lists them: a fenced lock's counter apart
	// from its lock, a fair lock's queue without its hash as a lock).
	// Doctor reads the locks, read/write locks and counts among them,
	// and the names of companion keys left without their record.
	Records int `json:"records"`
	// Seen is when each hold now held was first seen: pass it to the
	// next run as DoctorOptions.Seen.
	Seen map[string]time.Time `json:"seen"`
	// Kept counts, by kind, the records among Records that stay for good
	// by design, which are no problem: fencing counters (KindFencing),
	// fences' last tokens (KindFence) and elections' term counters
	// (KindElection). A token or a term must never go back, so nothing
	// deletes them: one key per name ever used, about KeptBytes each.
	Kept map[Kind]int `json:"kept"`
	// Unchecked names the masters whose eviction settings (MayEvict)
	// could not be read, each "<address>: <error>": the user may not
	// run INFO.
	Unchecked []string `json:"unchecked,omitempty"`
}

// KeptBytes is about what one record of Report.Kept costs Redis: an
// integer string under a key of a name of 10 to 20 characters, 72 to
// 88 B by MEMORY USAGE on Redis 7.0 (a longer name adds its length).
const KeptBytes = 90

// Doctor scans Redis for what is wrong with the locks and synchronizers
// whose names match opts.Pattern: old holds and long waits, leases not
// renewed, stale fair-queue entries, holders and waiters whose client
// is gone, fair queues left with neither (orphaned), expired permits,
// waits-for cycles across processes (distributed deadlocks), and masters
// that may evict keys (MayEvict). It walks the key space as Find does,
// on every master of a cluster, reads each name found as Read does,
// counts the listeners of the waiters' and relock holders' channels, and
// reads each master's INFO memory. Like Read, it changes nothing and
// returns by ctx's deadline. Eviction is a master's, not a name's: it
// is checked whatever opts.Pattern.
//
// Each name is a snapshot of its own, read at a different moment than
// the next: a finding may be over by the time it is printed, and a
// deadlock across names is reported only when its edges held at each
// name's reading (check it again before acting). A waiter or holder
// whose client is subscribing or reconnecting at that moment counts as
// gone, and so does one whose pub/sub connection is down while its
// commands still get through (docs/doctor.md).
func Doctor(ctx context.Context, rdb redis.UniversalClient, opts *DoctorOptions) (*Report, error) {
	if transport.IsNil(rdb) {
		return nil, fmt.Errorf("inspect: nil redis client: %w", relock.ErrInvalidArgument)
	}
	o := DoctorOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Old < 0 || o.Lease < 0 {
		return nil, fmt.Errorf("inspect: negative Old or Lease: %w", relock.ErrInvalidArgument)
	}
	o.Old = cmp.Or(o.Old, DefaultOld)
	o.Lease = cmp.Or(o.Lease, DefaultLease)
	rdb, done := derive.Deadlines(rdb)
	defer done()

	d := &doctor{opts: &o, report: &Report{Findings: []Finding{}, Seen: map[string]time.Time{}, Kept: map[Kind]int{}}}
	names := make(map[string]bool)
	err := walk(ctx, rdb, o.Pattern, func(name string, kind Kind, companion bool) error {
		if !companion {
			d.report.Records++
		}
		switch kind {
		case KindLock, KindRWLock, KindCount:
			names[name] = true
		case KindFencing, KindFence, KindElection:
			if !companion {
				d.report.Kept[kind]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, name := range slices.Sorted(maps.Keys(names)) {
		l, err := Read(ctx, rdb, name)
		if err != nil {
			return nil, err
		}
		d.check(l)
	}
	if err := d.listeners(ctx, rdb); err != nil {
		return nil, fmt.Errorf("inspect: counting the waiters' listeners: %w", transport.Ended(ctx, nil, err))
	}
	if err := d.evictions(ctx, rdb); err != nil {
		return nil, err
	}
	d.report.Findings = append(d.report.Findings, deadlocks(d.locks)...)
	slices.SortStableFunc(d.report.Findings, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Problem, b.Problem), cmp.Compare(a.Name, b.Name))
	})
	return d.report, nil
}

// doctor is one run of Doctor.
type doctor struct {
	opts   *DoctorOptions
	report *Report
	locks  []*Lock
	// waiting are the waiters whose channels' listeners are counted:
	// channel, then the finding it gives if nobody listens.
	waiting []pendingWaiter
	// unheard are the findings of gone owners (gone.go), counted with
	// them.
	unheard []unheard
}

type pendingWaiter struct {
	channel string
	finding Finding
}

func (d *doctor) add(f Finding) {
	if f.Owners == nil {
		f.Owners = []string{}
	}
	d.report.Findings = append(d.report.Findings, f)
}

// check looks at one name's state.
func (d *doctor) check(l *Lock) {
	if len(l.Holders) > 0 || len(l.Waiters) > 0 || len(l.Queue) > 0 {
		d.locks = append(d.locks, l)
	}
	d.checkHolds(l)
	d.checkWaits(l)
	d.checkPermits(l)
	d.checkGone(l)
}

// renewedAbove is the TTL below which a hold is not being renewed.
func (d *doctor) renewedAbove() TTL {
	return TTL(d.opts.Lease*2/3 - d.opts.Lease/10)
}

// age records that a hold is seen and returns how long ago it was first
// seen, 0 on its first sighting.
func (d *doctor) age(key string, now time.Time) time.Duration {
	first, ok := d.opts.Seen[key]
	if !ok || first.After(now) {
		first = now
	}
	d.report.Seen[key] = first
	return now.Sub(first)
}

func (d *doctor) checkHolds(l *Lock) {
	for _, h := range l.Holders {
		owner := []string{h.Field}
		if age := d.age(l.Name+" "+h.Field, l.ServerTime); age > d.opts.Old {
			d.add(Finding{Problem: OldHold, Name: l.Name, Kind: l.Kind, Owners: owner, Age: age,
				Detail: fmt.Sprintf("%s %s held by %s (%s) for at least %s (first seen then)", l.Kind, l.Name, h.Field, h.Library, round(age))})
		}
	}
	if len(l.Holders) == 0 {
		return
	}
	owners := make([]string, len(l.Holders))
	for i, h := range l.Holders {
		owners[i] = h.Field
	}
	switch {
	case l.TTL == NoExpiry:
		d.add(Finding{Problem: NotRenewed, Name: l.Name, Kind: l.Kind, Owners: owners, TTL: l.TTL,
			Detail: fmt.Sprintf("%s %s held by %s never expires: if its holder is gone, only a force-unlock frees it", l.Kind, l.Name, holderList(l))})
	case l.TTL > 0 && l.TTL < d.renewedAbove():
		d.add(Finding{Problem: NotRenewed, Name: l.Name, Kind: l.Kind, Owners: owners, TTL: l.TTL,
			Detail: fmt.Sprintf("%s %s held by %s has %s left, below the %s a renewal of a %s lease leaves: its holder stopped renewing, or took it with a fixed lease", l.Kind, l.Name, holderList(l), l.TTL, d.renewedAbove(), d.opts.Lease)})
	}
}

func (d *doctor) checkWaits(l *Lock) {
	for _, w := range l.Waiters {
		if age := l.ServerTime.Sub(w.Since); age > d.opts.Old {
			d.add(Finding{Problem: LongWait, Name: l.Name, Kind: l.Kind, Owners: []string{w.Field}, Age: age,
				Detail: fmt.Sprintf("%s has waited %s for %s %s, held by %s", w.Field, round(age), l.Kind, l.Name, holderList(l))})
		}
		if w.Library == Relock {
			d.waiting = append(d.waiting, pendingWaiter{layout.LockClientChannel(l.Name, w.ClientID), Finding{
				Problem: GoneWaiter, Name: l.Name, Kind: l.Kind, Owners: []string{w.Field},
				Detail: fmt.Sprintf("%s is registered as waiting for %s, but its client listens on nothing: it is gone; the registration goes when the lock's lease ends or a waiter gives up", w.Field, l.Name)}})
		}
	}
	for _, q := range l.Queue {
		for _, h := range l.Holders {
			if h.Field == q.Field {
				d.add(Finding{Problem: HolderQueued, Name: l.Name, Kind: l.Kind, Owners: []string{q.Field},
					Detail: fmt.Sprintf("%s holds %s and waits at place %d in its own fair queue: its unlock hands the lock back to itself, and the waiters behind it wait until the lease ends; force-unlock it, or remove it from the queue", q.Field, l.Name, q.Position)})
			}
		}
		if !q.Deadline.IsZero() && q.Deadline.Before(l.ServerTime) {
			d.add(Finding{Problem: StaleQueueEntry, Name: l.Name, Kind: l.Kind, Owners: []string{q.Field}, Age: l.ServerTime.Sub(q.Deadline),
				Detail: fmt.Sprintf("%s's place %d in the fair queue of %s passed its deadline %s ago: the next acquire drops it", q.Field, q.Position, l.Name, round(l.ServerTime.Sub(q.Deadline)))})
		}
		channel := ""
		switch q.Library {
		case Relock:
			channel = layout.LockClientChannel(l.Name, q.ClientID)
		case Redisson:
			channel = layout.FairWaiterChannel(l.Name, q.Field)
		}
		if channel != "" {
			d.waiting = append(d.waiting, pendingWaiter{channel, Finding{
				Problem: GoneWaiter, Name: l.Name, Kind: l.Kind, Owners: []string{q.Field},
				Detail: fmt.Sprintf("%s waits at place %d in the fair queue of %s, but nobody listens on its channel: it is gone; %s, and the queue keys %s", q.Field, q.Position, l.Name, dropped(q.Library), queueExpiry(l.QueueTTL))}})
		}
	}
	for _, w := range l.SemaphoreWaiters {
		if !w.Since.IsZero() {
			if age := l.ServerTime.Sub(w.Since); age > d.opts.Old {
				d.add(Finding{Problem: LongWait, Name: l.Name, Kind: l.Kind, Owners: []string{w.Member}, Age: age,
					Detail: fmt.Sprintf("%s has waited %s for %d permits of %s (%d available)", w.Member, round(age), w.Permits, l.Name, deref(l.Count))})
			}
		}
		d.waiting = append(d.waiting, pendingWaiter{layout.SemaphoreClientChannel(l.Name, w.ClientID), Finding{
			Problem: GoneWaiter, Name: l.Name, Kind: l.Kind, Owners: []string{w.Member},
			Detail: fmt.Sprintf("%s is registered as waiting for %s, but its client listens on nothing: it is gone; the next release drops it", w.Member, l.Name)}})
	}
}

func (d *doctor) checkPermits(l *Lock) {
	for _, p := range l.Permits {
		if p.TTL == NoExpiry {
			continue
		}
		owner := []string{p.ID}
		if age := d.age(l.Name+" permit "+p.ID, l.ServerTime); age > d.opts.Old {
			d.add(Finding{Problem: OldHold, Name: l.Name, Kind: l.Kind, Owners: owner, Age: age,
				Detail: fmt.Sprintf("permit %s of %s held for at least %s (first seen then)", p.ID, l.Name, round(age))})
		}
		switch {
		case p.TTL <= 0:
			d.add(Finding{Problem: ExpiredPermit, Name: l.Name, Kind: l.Kind, Owners: owner, TTL: p.TTL,
				Detail: fmt.Sprintf("permit %s of %s expired %s ago and is not reclaimed yet: the next acquire or release of %s returns it", p.ID, l.Name, -time.Duration(p.TTL), l.Name)})
		case p.TTL < d.renewedAbove():
			d.add(Finding{Problem: NotRenewed, Name: l.Name, Kind: l.Kind, Owners: owner, TTL: p.TTL,
				Detail: fmt.Sprintf("permit %s of %s has %s left, below the %s a renewal of a %s lease leaves: its holder stopped renewing, or took it with a fixed lease", p.ID, l.Name, p.TTL, d.renewedAbove(), d.opts.Lease)})
		}
	}
}

// listeners reports the waiters whose channels nobody listens on, and
// the gone owners (unheard).
func (d *doctor) listeners(ctx context.Context, rdb redis.UniversalClient) error {
	channels := make([]string, 0, len(d.waiting)+len(d.unheard))
	for _, w := range d.waiting {
		channels = append(channels, w.channel)
	}
	for _, u := range d.unheard {
		channels = append(channels, u.channels...)
	}
	slices.Sort(channels)
	channels = slices.Compact(channels)
	counts := map[string]int64{}
	for batch := range slices.Chunk(channels, 500) {
		n, err := subscribers(ctx, rdb, batch)
		if err != nil {
			return err
		}
		for c, k := range n {
			counts[c] += k
		}
	}
	for _, w := range d.waiting {
		if counts[w.channel] == 0 {
			d.add(w.finding)
		}
	}
	for _, u := range d.unheard {
		if !slices.ContainsFunc(u.channels, func(c string) bool { return counts[c] > 0 }) {
			d.add(u.finding)
		}
	}
	return nil
}

// dropped says when a fair lock's queue drops a gone waiter of lib.
func dropped(lib Library) string {
	if lib == Relock {
		return "the lock's next hand-over drops it (nobody hears the grant)"
	}
	return "an acquire or a hand-over drops it once its deadline passed"
}

func holderList(l *Lock) string {
	switch len(l.Holders) {
	case 0:
		return "nobody"
	case 1:
		return l.Holders[0].Field
	}
	return fmt.Sprintf("%d owners", len(l.Holders))
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

func deref(n *int64) int64 {
	if n == nil {
		return 0
	}
	return *n
}
