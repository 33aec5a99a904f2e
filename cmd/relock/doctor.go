package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/relock-go/relock/inspect"
)

// doctorCmd runs inspect.Doctor over every record and prints its
// findings, one a line (or the report in JSON), and returns errFindings
// when there are any: exit status 4, for cron checks. With -state it
// keeps when each hold was first seen in a file, from run to run, which
// is how a hold's age is known.
func doctorCmd(ctx context.Context, e *env, _ []string) error {
	seen, err := loadSeen(e.opts.state)
	if err != nil {
		return err
	}
	r, err := inspect.Doctor(ctx, e.rdb, &inspect.DoctorOptions{Old: e.opts.old, Lease: e.opts.lease, Seen: seen})
	if err != nil {
		return fmt.Errorf("%w (try a longer -timeout, or check the user's ACL: doctor needs SCAN, TYPE, HSCAN, GET, EVAL, EVALSHA and PUBSUB, and INFO to check eviction)", err)
	}
	if e.opts.state != "" {
		if err := saveSeen(e.opts.state, r.Seen); err != nil {
			return err
		}
	}
	if e.opts.json {
		err = writeJSON(e.out, r, "  ")
	} else if err = writeReport(e.out, r); err == nil {
		err = writeUnchecked(e.out, r.Unchecked)
	}
	switch {
	case err != nil:
		return err
	case len(r.Findings) > 0:
		return errFindings
	}
	return nil
}

func writeReport(w io.Writer, r *inspect.Report) error {
	if len(r.Findings) == 0 {
		if _, err := fmt.Fprintf(w, "no problems found in %s\n", count(r.Records, "record")); err != nil {
			return err
		}
		return writeKept(w, r.Kept)
	}
	tw := table(w)
	fmt.Fprintln(tw, "PROBLEM\tNAME\tKIND\tDETAIL")
	for _, f := range r.Findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Problem, f.Name, f.Kind, f.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%s in %s\n", count(len(r.Findings), "problem"), count(r.Records, "record")); err != nil {
		return err
	}
	return writeKept(w, r.Kept)
}

// writeUnchecked says which masters' eviction settings could not be
// read (inspect.Report.Unchecked), one a line.
func writeUnchecked(w io.Writer, unchecked []string) error {
	for _, u := range unchecked {
		if _, err := fmt.Fprintf(w, "could not check eviction on %s (allow the user INFO, or check that maxmemory-policy is noeviction)\n", u); err != nil {
			return err
		}
	}
	return nil
}

// count is n things, thing in the singular: "1 problem", "3 problems".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// loadSeen reads -state: none yet is no error.
func loadSeen(path string) (map[string]time.Time, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading -state: %w", err)
	}
	var seen map[string]time.Time
	if err := json.Unmarshal(b, &seen); err != nil {
		return nil, fmt.Errorf("reading -state %s: %w (remove the file to start afresh)", path, err)
	}
	return seen, nil
}

// saveSeen writes -state through a temporary file, so that a run cut
// short leaves the last one's.
func saveSeen(path string, seen map[string]time.Time) error {
	b, err := json.Marshal(seen)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing -state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing -state: %w", err)
	}
	return nil
}
