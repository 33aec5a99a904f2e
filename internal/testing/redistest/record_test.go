package redistest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestRecord: go test does not reuse a run on miniredis once
// redis-server is on PATH. It runs the watchdog package's TestServer,
// whose server redistest.Main launches before m.Run, three times with
// the same flags: with redis-server hidden from PATH (miniredis), again
// (reused: the control that the cache works here), and with
// redis-server back on PATH, which must run, on a real server.
func TestRecord(t *testing.T) {
	redistest.SkipShort(t, "runs go test three times")
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	server, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(redistest.RequireEnv) == "1" {
			t.Fatal(err)
		}
		t.Skip("redis-server is not installed")
	}
	// A directory of PATH's own makes the first run's inputs new to the
	// cache, whatever ran before.
	hidden := append(hideRedis(t), t.TempDir())
	with := t.TempDir()
	if err := os.Symlink(server, filepath.Join(with, "redis-server")); err != nil {
		t.Fatal(err)
	}
	runs := []struct {
		path         []string
		cached, real bool
	}{
		{hidden, false, false},
		{hidden, true, false},
		{append(hidden, with), false, true},
	}
	for i, r := range runs {
		out := goTest(t, goBin, strings.Join(r.path, string(os.PathListSeparator)))
		cached := strings.Contains(out, "(cached)")
		real := strings.Contains(out, "server: real true")
		if cached != r.cached || real != r.real {
			t.Fatalf("run %d: cached %v, real server %v; want %v, %v. Output:\n%s", i+1, cached, real, r.cached, r.real, out)
		}
	}
}

// hideRedis returns PATH with each directory holding a redis-* binary
// replaced by one of symbolic links to its other files, as .ci/run does.
func hideRedis(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if found, _ := filepath.Glob(filepath.Join(dir, "redis-*")); len(found) > 0 {
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			hidden := t.TempDir()
			for _, e := range entries {
				if !strings.HasPrefix(e.Name(), "redis-") {
					if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(hidden, e.Name())); err != nil {
						t.Fatal(err)
					}
				}
			}
			dir = hidden
		}
		dirs = append(dirs, dir)
	}
	return dirs
}

// goTest runs go test -v on the watchdog package's TestServer from the
// module's root with PATH path and RELOCK_REQUIRE_REDIS unset, and
// returns its output.
func goTest(t *testing.T, goBin, path string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "test", "-v", "-run", "^TestServer$", "./watchdog")
	cmd.Dir = filepath.Join("..", "..", "..")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, redistest.RequireEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, out)
	}
	return string(out)
}
