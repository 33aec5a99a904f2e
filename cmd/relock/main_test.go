package main_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/relock-go/relock"
	command "github.com/relock-go/relock/cmd/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// The tests run the command as an operator would, against a
// redis-server of their own: the test binary itself, started again with
// asCommand set in its environment, is the command (a go build of it
// would cost seconds of every run).
var (
	bin string
	srv *redistest.Server
)

// asCommand, set in the environment of the binary's children, makes
// them the command.
const asCommand = "RELOCK_CLI_TEST_AS_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(asCommand) == "1" {
		command.Main() // exits
	}
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	redistest.RaiseParallel()
	var err error
	if bin, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv(asCommand, "1")
	if srv, err = redistest.Launch(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := srv.CheckDenied(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	srv.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	return code
}

// result is what a run of the command gave.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// cli runs the command with args and stdin, bounded in time.
func cli(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errs.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("relock %v: %v", args, err)
	}
	return r
}

// ok runs the command against srv and fails t unless it succeeds with
// nothing on stderr.
func ok(t testing.TB, args ...string) string {
	t.Helper()
	r := cli(t, "", append([]string{"-url", "redis://" + srv.Addr}, args...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("relock %v: exit %d, stderr %q, stdout %q", args, r.code, r.stderr, r.stdout)
	}
	return r.stdout
}

// fails checks that r is a failure with exit status code and one line on
// stderr containing want.
func fails(t testing.TB, r result, code int, want string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != code || len(lines) != 1 || !strings.HasPrefix(lines[0], "relock: ") || !strings.Contains(lines[0], want) {
		t.Fatalf("exit %d, stderr %q: want exit %d and one line with %q", r.code, r.stderr, code, want)
	}
}

// newClient returns a relock client on srv, closed when t ends.
func newClient(t testing.TB) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), nil)
}

// eventually polls cond every 10ms until it holds, failing t if it does
// not within 5s.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// section returns the lines of a table in out that follow the line
// heading, up to the next blank line, without the column header.
func section(t testing.TB, out, heading string) []string {
	t.Helper()
	_, rest, found := strings.Cut(out, heading+"\n")
	if !found {
		t.Fatalf("no %q in:\n%s", heading, out)
	}
	rest, _, _ = strings.Cut(rest, "\n\n")
	lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	return lines[1:]
}

// cliEnv runs the command with env added to its environment.
func cliEnv(t testing.TB, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errs.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("relock %v: %v", args, err)
	}
	return r
}

// execCommand is the command with args, bounded by ctx.
func execCommand(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, bin, args...)
}

func writeFile(path string, b []byte) error { return os.WriteFile(path, b, 0o600) }
