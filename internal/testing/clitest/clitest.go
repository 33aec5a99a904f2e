// Package clitest builds and runs the relock command for tests outside
// its own package, which start the servers it is pointed at.
package clitest

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// runLimit bounds every run of the command.
const runLimit = 30 * time.Second

// Build builds the relock command into tb's temporary directory and
// returns its path.
func Build(tb testing.TB) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), "relock")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/relock-go/relock/cmd/relock").CombinedOutput(); err != nil {
		tb.Fatalf("building the command: %v\n%s", err, out)
	}
	return bin
}

// Run runs bin with args, bounded in time, and returns its output and
// exit status; a run that cannot start fails tb.
func Run(tb testing.TB, bin string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		tb.Fatalf("relock %v: %v", args, err)
	}
	return out.String(), errs.String(), code
}
