package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// A server is a redis-server process the benchmark started, or nil
// fields when it runs against -redis.
type server struct {
	addr string
	cmd  *exec.Cmd
	dir  string
	done chan struct{}
	once sync.Once // stop

	mu       sync.Mutex // guards replicas
	replicas []*server  // started by startReplica; stop stops them too
}

// startServer starts redis-server on a free loopback port, with
// persistence off and extra appended to its arguments, and waits until it
// answers.
func startServer(extra ...string) (*server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redis-server is not installed (on Debian: apt-get install redis-server), " +
			"or pass -redis host:port to use a server you run")
	}
	dir, err := os.MkdirTemp("", "relock-bench-")
	if err != nil {
		return nil, err
	}
	// A freed port may be taken again before redis-server binds it.
	for try := 0; try < 5; try++ {
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
		if err = s.exec(bin, port, extra); err == nil {
			return s, nil
		}
	}
	os.RemoveAll(dir)
	return nil, err
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) exec(bin string, port int, extra []string) error {
	args := []string{
		"--port", strconv.Itoa(port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--daemonize", "no",
		"--loglevel", "warning",
		// 10k waiting goroutines of a polling peer open many connections.
		"--maxclients", "20000",
	}
	s.cmd = exec.Command(bin, append(args, extra...)...)
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	s.cmd.Stdout, s.cmd.Stderr = &out, &out
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.done = make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		select {
		case <-s.done:
			return fmt.Errorf("redis-server on %s exited: %s", s.addr, out.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.kill()
	return fmt.Errorf("redis-server on %s did not answer within 10s: %s", s.addr, out.String())
}

// kill kills the server process.
func (s *server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.done
		s.cmd = nil
	}
}

// startReplica starts a redis-server on a free loopback port replicating
// s (--replicaof), and waits until it answers; it may still be syncing.
// s.stop stops it too.
func (s *server) startReplica() (*server, error) {
	host, port, err := net.SplitHostPort(s.addr)
	if err != nil {
		return nil, err
	}
	r, err := startServer("--replicaof", host, port)
	if err != nil {
		return nil, fmt.Errorf("replica: %w", err)
	}
	s.mu.Lock()
	s.replicas = append(s.replicas, r)
	s.mu.Unlock()
	return r, nil
}

// stop kills the server and its replicas and removes their directories,
// once.
func (s *server) stop() {
	s.once.Do(func() {
		s.mu.Lock()
		for _, r := range s.replicas {
			r.stop()
		}
		s.mu.Unlock()
		s.kill()
		if s.dir != "" {
			os.RemoveAll(s.dir)
		}
	})
}

// stopOnSignal stops the server and exits when the run is interrupted, so
// that an interrupted run leaves no redis-server or directory behind.
func (s *server) stopOnSignal() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-c
		fmt.Fprintln(os.Stderr, "bench: interrupted; stopping redis-server")
		s.stop()
		os.Exit(130)
	}()
}

// version returns the server's redis_version.
func serverVersion(ctx context.Context, rdb *redis.Client) string {
	info, err := rdb.Info(ctx, "server").Result()
	if err != nil {
		return "unknown"
	}
	return infoFields(info)["redis_version"]
}
