// Package redistest starts Redis servers for tests: a real redis-server
// process on a free loopback port when the binary is installed, or an
// in-process miniredis otherwise. With RELOCK_REQUIRE_REDIS=1 (set by CI) a
// missing redis-server fails the test instead of falling back.
//
// StartCluster and StartSentinel start the deployments of several
// processes that cluster and failover tests need (cluster.go,
// sentinel.go); they need the real binaries and skip, or fail under
// RELOCK_REQUIRE_REDIS=1, without them.
//
// Tests never touch a server they did not start: every server here listens
// on 127.0.0.1 only, on a port chosen at start, with persistence off.
package redistest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// RequireEnv names the variable that turns a missing redis-server into a
// failure.
const RequireEnv = "RELOCK_REQUIRE_REDIS"

const startTimeout = 10 * time.Second

// A Server is a Redis server started for tests.
type Server struct {
	Addr string
	mini *miniredis.Miniredis
	cmd  *exec.Cmd
	args []string
	dir  string
	conf string // a sentinel's config file: the process runs in sentinel mode

	limited bool        // defines LockUser (every real server but a sentinel)
	tls     *tls.Config // clients' TLS configuration: the server takes TLS only

	// miniredis only: its keys expire as real time passes.
	stopClock, clockDone chan struct{}
}

// runClock advances miniredis's TTLs with the wall clock, which it does
// not do by itself, so that leases expire as they do on a real server.
func (s *Server) runClock() {
	defer close(s.clockDone)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-s.stopClock:
			return
		case now := <-tick.C:
			s.mini.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Real reports whether s is a redis-server process (not miniredis). It
// calls Record.
func (s *Server) Real() bool {
	Record()
	return s.mini == nil
}

// Mini returns the miniredis behind s, or nil for a real server. It
// calls Record.
func (s *Server) Mini() *miniredis.Miniredis {
	Record()
	return s.mini
}

// Start starts a server for tb and stops it when tb ends, failing tb if
// the server denied LockUser anything (CheckDenied). Extra args are
// passed to redis-server ("--maxmemory", "1mb", ...).
func Start(tb testing.TB, args ...string) *Server {
	tb.Helper()
	s, err := Launch(args...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.CheckDenied(); err != nil {
			tb.Error(err)
		}
		s.Stop()
	})
	return s
}

// Launch starts a server that the caller stops with Stop; TestMain uses it
// for a server shared by a package's tests. A real server defines
// LockUser, so that tests can run relock as it (LockClient).
func Launch(args ...string) (*Server, error) {
	bin, required, err := find("redis-server")
	if err != nil {
		if required {
			return nil, fmt.Errorf("redistest: %s=1 but redis-server is not installed: %w", RequireEnv, err)
		}
		m, err := miniredis.Run()
		if err != nil {
			return nil, err
		}
		s := &Server{Addr: m.Addr(), mini: m, stopClock: make(chan struct{}), clockDone: make(chan struct{})}
		go s.runClock()
		return s, nil
	}
	dir, err := os.MkdirTemp("", "relock-redis-")
	if err != nil {
		return nil, err
	}
	s := &Server{args: append(userArgs(), args...), dir: dir, limited: true}
	if err := s.startOnFreePort(bin, nil); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// startOnFreePort runs s's redis-server on a free loopback port, trying
// another port (five in all) when one is taken before redis-server binds
// it, as a freed port may be. perTry, when set, returns arguments to add
// for each try (a cluster node's bus port).
func (s *Server) startOnFreePort(bin string, perTry func() ([]string, error)) error {
	base := s.args
	var err error
	for range 5 {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		s.args = base
		if perTry != nil {
			var more []string
			if more, err = perTry(); err != nil {
				continue
			}
			s.args = append(slices.Clone(base), more...)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = s.exec(bin); err == nil {
			return nil
		}
	}
	return err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) exec(bin string) error {
	_, port, _ := net.SplitHostPort(s.Addr)
	var args []string
	if s.conf != "" {
		// Sentinel mode reads (and rewrites) its configuration file,
		// which must come first.
		args = []string{s.conf, "--sentinel"}
	}
	ports := []string{"--port", port}
	if s.tls != nil {
		ports = []string{"--port", "0", "--tls-port", port}
	}
	args = append(args, ports...)
	args = append(args,
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--loglevel", "warning",
	)
	args = append(args, s.args...)
	cmd := exec.Command(bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return fmt.Errorf("redistest: redis-server on %s exited: %s", s.Addr, out.String())
		default:
		}
		if pid, err := s.pid(); err == nil {
			if pid != cmd.Process.Pid {
				// Another listener holds the port (a server or proxy of
				// a test running in parallel took it once freed): this
				// server cannot bind it.
				_ = cmd.Process.Kill()
				<-exited
				return fmt.Errorf("redistest: %s is taken by another process", s.Addr)
			}
			s.cmd = cmd
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	<-exited
	return fmt.Errorf("redistest: redis-server on %s did not answer within %v: %s", s.Addr, startTimeout, out.String())
}

// pid reads the process id of the server answering at s.Addr.
func (s *Server) pid() (int, error) {
	var info string
	err := s.probe(func(ctx context.Context, c *redis.Client) (err error) {
		info, err = c.Info(ctx, "server").Result()
		return err
	})
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, fmt.Errorf("redistest: no process_id in INFO server of %s", s.Addr)
}

func (s *Server) ping() error {
	return s.probe(func(ctx context.Context, c *redis.Client) error { return c.Ping(ctx).Err() })
}

// probe runs f with a client of s that tries once, for a second.
func (s *Server) probe(f func(ctx context.Context, c *redis.Client) error) error {
	o := s.Options()
	o.MaxRetries, o.DialTimeout, o.DialerRetries = -1, time.Second, 1
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return f(ctx, c)
}

// Stop kills the server and removes its files. It is idempotent.
func (s *Server) Stop() {
	if s.mini != nil {
		select {
		case <-s.stopClock:
		default:
			close(s.stopClock)
			<-s.clockDone
			s.mini.Close()
		}
		return
	}
	s.Kill()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// Kill stops a real server with SIGKILL and waits until its port is
// closed; Restart starts it again on the same port.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Kill()
	for i := 0; i < 250 && s.ping() == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd = nil
}

// Restart starts a killed server again on the same address, empty.
func (s *Server) Restart() error {
	if s.mini != nil {
		return errors.New("redistest: cannot restart miniredis")
	}
	s.Kill()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	return s.exec(bin)
}

// Pause freezes a real server (SIGSTOP): connections stay open but nothing
// is answered. Resume undoes it.
func (s *Server) Pause() error  { return s.signal(syscall.SIGSTOP) }
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	if s.cmd == nil {
		return errors.New("redistest: no redis-server process")
	}
	return s.cmd.Process.Signal(sig)
}

var clientNames atomic.Int64

// Options returns go-redis options for s, as the default user: each call
// names its connections anew. It calls Record.
func (s *Server) Options() *redis.Options {
	Record()
	o := &redis.Options{
		Addr:       s.Addr,
		ClientName: "relock-test-" + strconv.FormatInt(clientNames.Add(1), 10),
	}
	if s.tls != nil {
		o.TLSConfig = s.tls.Clone()
	}
	return o
}

// LockOptions returns the options relock's clients use: Options as
// LockUser on a limited server, as the default user otherwise.
func (s *Server) LockOptions() *redis.Options {
	o := s.Options()
	if s.limited {
		o.Username, o.Password = LockUser, LockPassword
	}
	return o
}

// Client returns a go-redis client for s as the default user, for a
// test's own commands, closed when tb ends.
func (s *Server) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := s.NewClient()
	tb.Cleanup(func() { c.Close() })
	return c
}

// NewClient returns a go-redis client for s that the caller closes.
func (s *Server) NewClient() *redis.Client { return redis.NewClient(s.Options()) }

// LockClient returns a go-redis client with LockOptions, for relock,
// closed when tb ends.
func (s *Server) LockClient(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(s.LockOptions())
	tb.Cleanup(func() { c.Close() })
	return c
}

// RequireReal skips tb when s is miniredis. Under RELOCK_REQUIRE_REDIS=1
// servers are always real, so CI never skips.
func (s *Server) RequireReal(tb testing.TB) {
	tb.Helper()
	if !s.Real() {
		tb.Skip("needs a real redis-server (install redis-server to run it)")
	}
}

var keys atomic.Int64

// Key returns a name unique to this process, for a test's lock names.
func Key(tb testing.TB) string {
	return tb.Name() + ":" + strconv.FormatInt(keys.Add(1), 10)
}

// childEnv tells a test binary started by StartChild which role to play.
const childEnv = "RELOCK_TEST_CHILD"

// ChildRole reports whether this process is a child started by
// StartChild, and with what role and arguments. TestMain calls it first
// and, in a child, runs the role instead of the tests.
func ChildRole() (role string, args []string, ok bool) {
	v := os.Getenv(childEnv)
	if v == "" {
		return "", nil, false
	}
	f := strings.Fields(v)
	return f[0], f[1:], true
}

// StartChild runs the test binary again as a child process playing role
// with args (no spaces in either), for tests that kill a lock holder with
// SIGKILL. It returns the child and the first line the child prints
// (typically its client ID, once it is ready); the child is killed when
// tb ends.
func StartChild(tb testing.TB, role string, args ...string) (*exec.Cmd, string) {
	tb.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join(append([]string{role}, args...), " "))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		tb.Fatalf("child %s: %v", role, err)
	}
	return cmd, strings.TrimSpace(line)
}
