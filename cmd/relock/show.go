package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/inspect"
)

// inspectCmd prints what is kept under one name; a group lock's values,
// when given, name the fields its holders hold.
func inspectCmd(ctx context.Context, e *env, args []string) error {
	l, err := e.read(ctx, args[0])
	if err != nil {
		return err
	}
	if !l.Exists() {
		return notFoundError{l.Name}
	}
	var notHeld []string
	if values := args[1:]; len(values) > 0 {
		if l.Kind != inspect.KindGroup {
			return usagef("%q is %s, not a group lock: VALUEs go only with a group lock (see relock help inspect)", l.Name, describe(l))
		}
		notHeld = l.NameValues(e.opts.groupCodec, values)
	}
	if e.opts.json {
		return writeJSON(e.out, l, "  ")
	}
	if err := writeLock(e.out, l); err != nil {
		return err
	}
	if len(notHeld) > 0 {
		_, err = fmt.Fprintf(e.out, "\nnot held (under %s): %s\n", e.opts.groupCodec, strings.Join(notHeld, ", "))
	}
	return err
}

// read reads one name within -timeout.
func (e *env) read(ctx context.Context, name string) (*inspect.Lock, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	l, err := inspect.Read(ctx, e.rdb, name)
	if err != nil && !errors.Is(err, relock.ErrInvalidName) {
		return nil, fmt.Errorf("%w (try a longer -timeout, or check the user's ACL: inspect needs EVAL, EVALSHA, GET and PUBSUB)", err)
	}
	return l, err
}

// errLimit ends a list at -limit.
var errLimit = errors.New("limit reached")

// listCmd prints the records whose names match a pattern, by name.
func listCmd(ctx context.Context, e *env, args []string) error {
	pattern := "*"
	if len(args) == 1 {
		pattern = args[0]
	}
	want, err := kindSet(e.opts.kinds)
	if err != nil {
		return err
	}
	var found []*inspect.Lock
	idle := 0 // counts left out by -skip-idle
	err = inspect.Find(ctx, e.rdb, pattern, func(name string, kind inspect.Kind) error {
		if want != nil && !want[kind] {
			return nil
		}
		if e.opts.limit > 0 && len(found) == e.opts.limit {
			return errLimit
		}
		l, err := e.read(ctx, name)
		if err != nil {
			return err
		}
		switch row := listed(l, kind); {
		case row == nil: // gone since the scan saw it
		case e.opts.skipIdle && idleCount(row):
			idle++
		default:
			found = append(found, row)
		}
		return nil
	})
	limited := errors.Is(err, errLimit)
	if err != nil && !limited {
		return err
	}
	slices.SortFunc(found, func(a, b *inspect.Lock) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(string(a.Kind), string(b.Kind)))
	})
	if e.opts.json {
		if found == nil {
			found = []*inspect.Lock{}
		}
		err = writeJSON(e.out, found, "  ")
	} else {
		err = writeList(e.out, found)
	}
	if err == nil && idle > 0 {
		fmt.Fprintf(e.errs, "relock: left out %d idle counts (-skip-idle)\n", idle)
	}
	if err == nil && limited {
		fmt.Fprintf(e.errs, "relock: listed the first %d records found (-limit)\n", e.opts.limit)
	}
	return err
}

// idleCount reports a count whose use nothing shows now
// (inspect.Lock.Use): an idle semaphore's or latch's count is an integer
// string like any application's counter, and those can swamp a list.
func idleCount(l *inspect.Lock) bool { return l.Kind == inspect.KindCount && l.Use == "" }

// listKind is a record's kind in the list: kind's, and for a count the
// use its state shows now, if any: "count (semaphore's)".
func listKind(l *inspect.Lock) string {
	if use, ok := countUses[l.Use]; ok && l.Kind == inspect.KindCount {
		return "count (" + use + ")"
	}
	return kind(l)
}

// countUses name a count's uses in the list.
var countUses = map[inspect.Kind]string{
	inspect.KindSemaphore: "semaphore's",
	inspect.KindPermits:   "expirable semaphore's",
	inspect.KindLatch:     "latch's",
}

// listed is l as a line of the list of kind, or nil when l has no
// record of that kind (any more): a name may have records of several
// kinds, each listed on a line of its own (a fenced lock's counter
// beside its lock).
func listed(l *inspect.Lock, kind inspect.Kind) *inspect.Lock {
	if l.Kind == kind {
		return l
	}
	row := &inspect.Lock{Name: l.Name, Kind: kind, TTL: inspect.NoExpiry,
		Holders: []inspect.Holder{}, Queue: []inspect.Queued{}, Waiters: []inspect.Waiter{}, ServerTime: l.ServerTime}
	switch {
	case kind == inspect.KindFencing && l.Token != 0:
		row.Token = l.Token
	case kind == inspect.KindFence && l.Fence != 0:
		row.Fence = l.Fence
	case kind == inspect.KindElection && l.Election != nil:
		row.Election = l.Election
	default:
		return nil
	}
	return row
}

// kindSet reads -kind: nil for every kind.
func kindSet(list string) (map[inspect.Kind]bool, error) {
	if list == "" {
		return nil, nil
	}
	set := make(map[inspect.Kind]bool)
	for k := range strings.SplitSeq(list, ",") {
		switch kind := inspect.Kind(strings.TrimSpace(k)); kind {
		case inspect.KindLock, inspect.KindRWLock, inspect.KindGroup, inspect.KindCount,
			inspect.KindElection, inspect.KindFencing, inspect.KindFence:
			set[kind] = true
		case inspect.KindSemaphore, inspect.KindPermits, inspect.KindLatch:
			return nil, usagef("-kind %s: a semaphore's, an expirable semaphore's and a latch's record is a count, which nothing that lasts in Redis tells apart: use -kind count (relock inspect NAME shows what a count is used as while someone waits)", kind)
		default:
			return nil, usagef("-kind: unknown kind %q (see relock help list)", k)
		}
	}
	return set, nil
}

func writeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

// writeList prints one line per record.
func writeList(w io.Writer, records []*inspect.Lock) error {
	tw := table(w)
	fmt.Fprintln(tw, "NAME\tKIND\tTTL\tHOLDERS\tQUEUED\tWAITERS")
	for _, l := range records {
		ttl := l.TTL
		switch l.Kind {
		case inspect.KindFencing, inspect.KindFence:
			ttl = inspect.NoExpiry // their counters are kept for good
		case inspect.KindElection:
			ttl = inspect.NoKey // no lease without a leader
			if l.Election.Leader != nil {
				ttl = l.Election.Leader.TTL
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", l.Name, listKind(l), ttl, holders(l), len(l.Queue)+candidates(l), len(l.Waiters)+len(l.SemaphoreWaiters))
	}
	return tw.Flush()
}

func candidates(l *inspect.Lock) int {
	if l.Election == nil {
		return 0
	}
	return len(l.Election.Candidates)
}

// writeLock prints what is kept under a name: a summary, then its
// holders, its fair queue and its registered waiters, each a table, and
// the synchronizers' tables (writeSync).
func writeLock(w io.Writer, l *inspect.Lock) error {
	tw := table(w)
	fmt.Fprintf(tw, "name\t%s\n", l.Name)
	fmt.Fprintf(tw, "kind\t%s\n", kind(l))
	if l.Mode != "" {
		fmt.Fprintf(tw, "mode\t%s\n", l.Mode)
	}
	switch l.Kind {
	case inspect.KindNone, inspect.KindElection, inspect.KindFencing, inspect.KindFence:
	default:
		fmt.Fprintf(tw, "ttl\t%s\n", l.TTL)
	}
	if l.Fair {
		fmt.Fprintf(tw, "queue ttl\t%s\n", queueKeys(l.QueueTTL))
	}
	if l.Kind == inspect.KindCount {
		fmt.Fprintf(tw, "used as\t%s\n", useMeaning(l.Use))
	}
	if l.Count != nil {
		fmt.Fprintf(tw, "count\t%d%s\n", *l.Count, countMeaning(l.Use))
	}
	if l.Token != 0 {
		fmt.Fprintf(tw, "fencing token\t%d\n", l.Token)
	}
	if l.Fence != 0 {
		fmt.Fprintf(tw, "fence token\t%d (the last one package fence's guard recorded for this resource)\n", l.Fence)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeSync(w, l); err != nil {
		return err
	}
	if len(l.Holders) > 0 {
		fmt.Fprintln(w, "\nheld by:")
		tw = table(w)
		rw, group := l.Kind == inspect.KindRWLock, l.Kind == inspect.KindGroup
		switch {
		case rw:
			fmt.Fprintln(tw, "  CLIENT ID\tOWNER\tLIBRARY\tHOLDS\tSIDE\tREAD LEASES")
		case group:
			fmt.Fprintln(tw, "  CLIENT ID\tOWNER\tLIBRARY\tHOLDS\tVALUES")
		default:
			fmt.Fprintln(tw, "  CLIENT ID\tOWNER\tLIBRARY\tHOLDS")
		}
		for _, h := range l.Holders {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d", orDash(h.ClientID), orDash(h.Owner), h.Library, h.Holds)
			switch {
			case rw:
				fmt.Fprintf(tw, "\t%s\t%s", side(h), leases(h.ReadLeases))
			case group:
				fmt.Fprintf(tw, "\t%s", values(h))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if group && !named(l) {
			fmt.Fprintf(w, "\n(Redis keeps a group's values as their hashes, shown in brackets: name them with relock inspect %s VALUE..., and -codec string for clients with Redisson's StringCodec)\n", l.Name)
		}
	}
	if len(l.Queue) > 0 {
		fmt.Fprintln(w, "\nfair queue:")
		tw = table(w)
		fmt.Fprintln(tw, "  POS\tCLIENT ID\tOWNER\tLIBRARY\tDEADLINE")
		for _, q := range l.Queue {
			pos := strconv.Itoa(q.Position)
			if q.Position == 0 {
				pos = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", pos, orDash(q.ClientID), orDash(q.Owner), q.Library, deadline(q.Deadline, l.ServerTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(l.Waiters) > 0 {
		fmt.Fprintln(w, "\nwaiting (relock's registry, longest first):")
		tw = table(w)
		fmt.Fprintln(tw, "  CLIENT ID\tOWNER\tLIBRARY\tWAITING\tFENCED")
		for _, wt := range l.Waiters {
			fenced := "no"
			if wt.Fenced {
				fenced = "yes"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", orDash(wt.ClientID), orDash(wt.Owner), wt.Library, l.ServerTime.Sub(wt.Since).Round(time.Millisecond), fenced)
		}
		return tw.Flush()
	}
	return nil
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0) }

// kind names a record's kind in a few words that do not change with its
// state: who holds it, who waits and a count's use are shown apart.
func kind(l *inspect.Lock) string {
	s := string(l.Kind)
	switch {
	case l.Kind == inspect.KindNone:
		s = "none (not held)"
	case l.Kind == inspect.KindOther:
		s += " (a Redis " + l.Type + ", not relock's)"
	case l.ElectionOf != "":
		s += " (election " + l.ElectionOf + "'s)"
	}
	return s
}

// describe names a record's kind with its article, for messages.
func describe(l *inspect.Lock) string {
	switch l.Kind {
	case inspect.KindNone:
		return "no record"
	case inspect.KindRWLock:
		return "a read/write lock"
	case inspect.KindGroup:
		return "a group lock"
	case inspect.KindCount:
		if l.Use != "" {
			return "a count (" + useMeaning(l.Use) + ")"
		}
		return "a count"
	case inspect.KindElection:
		return "an election"
	case inspect.KindFencing:
		return "a fencing counter"
	case inspect.KindFence:
		return "a fence guard's token"
	case inspect.KindOther:
		return "a Redis " + l.Type + " that is not relock's or Redisson's"
	}
	return "a " + string(l.Kind)
}

// useMeaning says what a count's use is, and by what it is told.
func useMeaning(use inspect.Kind) string {
	switch use {
	case inspect.KindPermits:
		return "an expirable semaphore's: permits are held"
	case inspect.KindSemaphore:
		return "a semaphore's: someone waits for permits"
	case inspect.KindLatch:
		return "a latch's: someone awaits it"
	}
	return "unknown: nobody holds permits or waits (a semaphore's, an expirable semaphore's or a latch's count, or another application's counter)"
}

// values lists a group holder's values: their names where known, else
// their fields in brackets.
func values(h inspect.Holder) string {
	s := make([]string, len(h.Values))
	for i, f := range h.Values {
		s[i] = "[" + f + "]"
		if i < len(h.ValueNames) && h.ValueNames[i] != "" {
			s[i] = h.ValueNames[i]
		}
	}
	return strings.Join(s, ",")
}

// named reports whether every value of a group's holders is named.
func named(l *inspect.Lock) bool {
	for _, h := range l.Holders {
		if len(h.ValueNames) < len(h.Values) || slices.Contains(h.ValueNames, "") {
			return false
		}
	}
	return true
}

// holders summarises who holds a record: the library and hold count of
// a single holder, how many hold it, how many permits are held, or an
// election's leader.
func holders(l *inspect.Lock) string {
	switch {
	case len(l.Permits) > 0:
		return fmt.Sprintf("%d permits", len(l.Permits))
	case l.Election != nil && l.Election.Leader != nil:
		ld := l.Election.Leader
		return fmt.Sprintf("%s %s:%s term %d", ld.Library, short(ld.ClientID), ld.Owner, ld.Term)
	}
	s := "-"
	switch len(l.Holders) {
	case 0:
	case 1:
		h := l.Holders[0]
		s = fmt.Sprintf("%s %s:%s x%d", h.Library, short(h.ClientID), h.Owner, h.Holds)
	default:
		s = strconv.Itoa(len(l.Holders))
	}
	if l.Mode != "" {
		s += " (" + l.Mode + ")"
	}
	return s
}

// short abbreviates a client id to its first block.
func short(id string) string {
	if i := strings.IndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}

func side(h inspect.Holder) string {
	if h.Write {
		return "write"
	}
	return "read"
}

func leases(ttls []inspect.TTL) string {
	if len(ttls) == 0 {
		return "-"
	}
	s := make([]string, len(ttls))
	for i, t := range ttls {
		s[i] = t.String()
	}
	return strings.Join(s, ",")
}

// deadline shows a fair waiter's deadline and how far it is from the
// server's clock.
func deadline(d, now time.Time) string {
	if d.IsZero() {
		return "-"
	}
	left := d.Sub(now).Round(time.Millisecond)
	if left < 0 {
		return fmt.Sprintf("%s (passed %s ago)", d.Format(time.RFC3339Nano), -left)
	}
	return fmt.Sprintf("%s (in %s)", d.Format(time.RFC3339Nano), left)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
