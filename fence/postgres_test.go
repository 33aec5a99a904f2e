package fence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq"

	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestPostgres runs the SQL suite on a PostgreSQL server of its own. It
// is skipped under -short, and when PostgreSQL is not installed, unless
// RELOCK_REQUIRE_REDIS=1 (CI, which installs it), where that fails.
func TestPostgres(t *testing.T) {
	redistest.SkipShort(t, "starts a PostgreSQL server")
	testSQL(t, startPostgres(t))
}

// startPostgres starts a PostgreSQL server for t, as redistest starts
// redis-server: on a free loopback port, in a temporary directory,
// without durability (fsync off), stopped and removed when t ends. It
// returns a *sql.DB on the server's postgres database. PostgreSQL refuses
// to run as root, so a root test runs it as the postgres user, which the
// Debian packages create.
func startPostgres(t *testing.T) *sql.DB {
	t.Helper()
	bin, err := postgresBin()
	if err != nil {
		if os.Getenv(redistest.RequireEnv) == "1" {
			t.Fatalf("%s=1 but PostgreSQL is not installed: %v", redistest.RequireEnv, err)
		}
		t.Skipf("needs PostgreSQL (apt-get install postgresql): %v", err)
	}
	cred, err := postgresUser()
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: its parent is private to this user, and the server's
	// user must reach the directory.
	dir, err := os.MkdirTemp("", "relock-postgres-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	initdb := postgresCmd(filepath.Join(bin, "initdb"), dir, cred,
		"-D", data, "-U", "postgres", "--auth=trust", "--no-locale", "-E", "UTF8", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v: %s", err, out)
	}
	var last error
	for range 5 { // a free port may be taken before the server binds it
		db, err := runPostgres(t, filepath.Join(bin, "postgres"), dir, data, cred)
		if err == nil {
			return db
		}
		last = err
	}
	t.Fatal(last)
	return nil
}

// runPostgres starts the server on a free port and waits until it
// answers, or returns why not.
func runPostgres(t *testing.T, bin, dir, data string, cred *syscall.Credential) (*sql.DB, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := postgresCmd(bin, dir, cred, "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	db, err := sql.Open("postgres", fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable connect_timeout=2", port))
	if err != nil {
		stop()
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			t.Cleanup(stop) // after db.Close: cleanups run last first
			t.Cleanup(func() { db.Close() })
			return db, nil
		}
		select {
		case <-exited:
			db.Close()
			return nil, fmt.Errorf("postgres on port %d exited: %s", port, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			db.Close()
			stop()
			return nil, fmt.Errorf("postgres on port %d did not answer within 30s: %v: %s", port, err, out.String())
		}
	}
}

// postgresCmd runs one of PostgreSQL's programs as cred (nil: as this
// process's user), in dir, killed if the test process dies.
func postgresCmd(bin, dir string, cred *syscall.Credential, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// postgresBin returns the directory of initdb and postgres: initdb's on
// PATH (through symbolic links), or else Debian's newest,
// /usr/lib/postgresql/<version>/bin.
func postgresBin() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if p, err = filepath.EvalSymlinks(p); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	dirs = slices.DeleteFunc(dirs, func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "postgres"))
		return err != nil
	})
	if len(dirs) == 0 {
		return "", errors.New("no initdb on PATH nor in /usr/lib/postgresql/*/bin")
	}
	version := func(d string) int {
		v, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return v
	}
	slices.SortFunc(dirs, func(a, b string) int { return version(a) - version(b) })
	return dirs[len(dirs)-1], nil
}

// postgresUser returns whom to run PostgreSQL as: nil (this process's
// user), or the postgres user when this process is root.
func postgresUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: %w", err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
