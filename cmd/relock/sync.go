package main

import (
	"fmt"
	"io"
	"time"

	"github.com/relock-go/relock/inspect"
)

// countMeaning says what a count is, by its use.
func countMeaning(use inspect.Kind) string {
	switch use {
	case inspect.KindSemaphore, inspect.KindPermits:
		return " permits available"
	case inspect.KindLatch:
		return " to count down"
	}
	return " (permits available, or a latch's count)"
}

// writeSync prints the synchronizers' tables: permits held, semaphore
// waiters, and an election's leader, candidates and history.
func writeSync(w io.Writer, l *inspect.Lock) error {
	if l.Grants > 0 {
		fmt.Fprintf(w, "grants not yet acknowledged: %d\n", l.Grants)
	}
	if len(l.Permits) > 0 {
		fmt.Fprintln(w, "\npermits held (earliest expiry first):")
		tw := table(w)
		fmt.Fprintln(tw, "  PERMIT ID\tLEASE LEFT\tEXPIRES")
		for _, p := range l.Permits {
			expires := "never (no lease)"
			if !p.Expiry.IsZero() {
				expires = p.Expiry.Format(time.RFC3339Nano)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.ID, permitTTL(p.TTL), expires)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(l.SemaphoreWaiters) > 0 {
		fmt.Fprintln(w, "\nwaiting for permits (relock's registry, longest first):")
		tw := table(w)
		fmt.Fprintln(tw, "  CLIENT ID\tWAITER\tPERMITS\tWAITING")
		for _, sw := range l.SemaphoreWaiters {
			waiting := l.ServerTime.Sub(sw.Since).Round(time.Millisecond).String()
			if sw.Since.IsZero() {
				waiting = fmt.Sprintf("woken, to try within %s", sw.Woken.Sub(l.ServerTime).Round(time.Millisecond))
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", sw.ClientID, sw.Tag, sw.Permits, waiting)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if l.Election != nil {
		return writeElection(w, l.Election, l.ServerTime)
	}
	return nil
}

func permitTTL(t inspect.TTL) string {
	if t != inspect.NoExpiry && t <= 0 {
		return fmt.Sprintf("expired %s ago", -time.Duration(t))
	}
	return t.String()
}

func writeElection(w io.Writer, e *inspect.Election, now time.Time) error {
	fmt.Fprintf(w, "\nelection: term counter %d\n", e.Term)
	tw := table(w)
	if ld := e.Leader; ld != nil {
		since := "-"
		if !ld.Since.IsZero() {
			since = fmt.Sprintf("%s (%s ago)", ld.Since.Format(time.RFC3339Nano), now.Sub(ld.Since).Round(time.Millisecond))
		}
		fmt.Fprintln(tw, "  LEADER CLIENT ID\tOWNER\tLIBRARY\tTERM\tVALUE\tLEASE LEFT\tELECTED")
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%q\t%s\t%s\n", ld.ClientID, ld.Owner, ld.Library, ld.Term, ld.Value, ld.TTL, since)
	} else {
		fmt.Fprintln(tw, "  no leader")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(e.Candidates) > 0 {
		fmt.Fprintln(w, "\ncandidates (next first):")
		tw = table(w)
		fmt.Fprintln(tw, "  POS\tCLIENT ID\tOWNER\tLIBRARY")
		for _, c := range e.Candidates {
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\n", c.Position, orDash(c.ClientID), orDash(c.Owner), c.Library)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(e.History) > 0 {
		fmt.Fprintln(w, "\nhistory (newest first):")
		tw = table(w)
		fmt.Fprintln(tw, "  TERM\tVALUE\tAT")
		for _, c := range e.History {
			fmt.Fprintf(tw, "  %d\t%q\t%s\n", c.Term, c.Value, c.At.Format(time.RFC3339Nano))
		}
		return tw.Flush()
	}
	return nil
}
