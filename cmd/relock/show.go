package main

import (
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

	"github.com/relock-go/relock/inspect"
)

// inspectCmd prints the state of one lock.
func inspectCmd(ctx context.Context, e *env, args []string) error {
	l, err := e.read(ctx, args[0])
	if err != nil {
		return err
	}
	if !l.Exists() {
		return fmt.Errorf("no lock named %q", l.Name)
	}
	if e.opts.json {
		return writeJSON(e.out, l, "  ")
	}
	return writeLock(e.out, l)
}

// read reads one lock within -timeout.
func (e *env) read(ctx context.Context, name string) (*inspect.Lock, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.timeout)
	defer cancel()
	return inspect.Read(ctx, e.rdb, name)
}

// errLimit ends a list at -limit.
var errLimit = errors.New("limit reached")

// listCmd prints the locks whose names match a pattern, by name.
func listCmd(ctx context.Context, e *env, args []string) error {
	pattern := "*"
	if len(args) == 1 {
		pattern = args[0]
	}
	var locks []*inspect.Lock
	err := inspect.List(ctx, e.rdb, pattern, func(name string) error {
		if e.opts.limit > 0 && len(locks) == e.opts.limit {
			return errLimit
		}
		l, err := e.read(ctx, name)
		if err != nil {
			return err
		}
		if l.Kind == inspect.KindLock || l.Kind == inspect.KindRWLock {
			locks = append(locks, l) // not released since the scan saw it
		}
		return nil
	})
	limited := errors.Is(err, errLimit)
	if err != nil && !limited {
		return err
	}
	slices.SortFunc(locks, func(a, b *inspect.Lock) int { return strings.Compare(a.Name, b.Name) })
	if e.opts.json {
		if locks == nil {
			locks = []*inspect.Lock{}
		}
		err = writeJSON(e.out, locks, "  ")
	} else {
		err = writeList(e.out, locks)
	}
	if err == nil && limited {
		fmt.Fprintf(e.errs, "relock: listed the first %d locks found (-limit)\n", e.opts.limit)
	}
	return err
}

func writeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", indent)
	return enc.Encode(v)
}

// writeList prints one line per lock.
func writeList(w io.Writer, locks []*inspect.Lock) error {
	tw := table(w)
	fmt.Fprintln(tw, "NAME\tKIND\tTTL\tHOLDERS\tQUEUED\tWAITERS")
	for _, l := range locks {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\n", l.Name, kind(l), l.TTL, holders(l), len(l.Queue), len(l.Waiters))
	}
	return tw.Flush()
}

// writeLock prints one lock: a summary, then its holders, its fair queue
// and its registered waiters, each a table.
func writeLock(w io.Writer, l *inspect.Lock) error {
	tw := table(w)
	fmt.Fprintf(tw, "lock\t%s\n", l.Name)
	fmt.Fprintf(tw, "kind\t%s\n", kind(l))
	if l.Kind != inspect.KindNone {
		fmt.Fprintf(tw, "ttl\t%s\n", l.TTL)
	}
	if l.Token != 0 {
		fmt.Fprintf(tw, "fencing token\t%d\n", l.Token)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(l.Holders) > 0 {
		fmt.Fprintln(w, "\nheld by:")
		tw = table(w)
		rw := l.Kind == inspect.KindRWLock
		if rw {
			fmt.Fprintln(tw, "  CLIENT ID\tOWNER\tLIBRARY\tHOLDS\tSIDE\tREAD LEASES")
		} else {
			fmt.Fprintln(tw, "  CLIENT ID\tOWNER\tLIBRARY\tHOLDS")
		}
		for _, h := range l.Holders {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%d", orDash(h.ClientID), orDash(h.Owner), h.Library, h.Holds)
			if rw {
				fmt.Fprintf(tw, "\t%s\t%s", side(h), leases(h.ReadLeases))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
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

// kind describes a lock's record in a few words.
func kind(l *inspect.Lock) string {
	s := string(l.Kind)
	switch l.Kind {
	case inspect.KindNone:
		s = "none (not held)"
	case inspect.KindRWLock:
		s += " (" + l.Mode + ")"
	case inspect.KindOther:
		s += " (a Redis " + l.Type + ", not a lock)"
	}
	if l.Fair {
		s += ", fair"
	}
	return s
}

// holders summarises who holds a lock: the library and hold count of a
// single holder, or how many hold it.
func holders(l *inspect.Lock) string {
	switch len(l.Holders) {
	case 0:
		return "-"
	case 1:
		h := l.Holders[0]
		return fmt.Sprintf("%s %s:%s x%d", h.Library, short(h.ClientID), h.Owner, h.Holds)
	}
	return strconv.Itoa(len(l.Holders))
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
