package relockotel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// requireEnv set to 1 makes a missing redis-server a failure rather than
// a skip, as in the main module's tests.
const requireEnv = "RELOCK_REQUIRE_REDIS"

// startTimeout bounds the wait for a started redis-server to answer.
const startTimeout = 10 * time.Second

// startRedis starts a redis-server for t on a free loopback port, with
// no persistence and its files in a temporary directory, and kills it
// when t ends. It returns the server's address. It skips t when
// redis-server is not installed, unless RELOCK_REQUIRE_REDIS=1.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv(requireEnv) == "1" {
			t.Fatalf("%s=1 but redis-server is not installed: %v", requireEnv, err)
		}
		t.Skipf("redis-server is not installed: %v", err)
	}
	dir := t.TempDir()
	// Another process may take the free port before the server does.
	for range 5 {
		var addr string
		if addr, err = launch(t, bin, dir); err == nil {
			return addr
		}
	}
	t.Fatal(err)
	return ""
}

// launch runs redis-server on a port that was free a moment ago and
// waits until it answers PING.
func launch(t *testing.T, bin, dir string) (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--loglevel", "warning")
	// The server dies with the test binary, even one killed by -timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	kill := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	for deadline := time.Now().Add(startTimeout); time.Now().Before(deadline); {
		select {
		case <-exited:
			return "", fmt.Errorf("redis-server on %s exited: %s", addr, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			t.Cleanup(kill)
			return addr, nil
		}
	}
	kill()
	return "", errors.Join(fmt.Errorf("redis-server on %s did not answer within %v: %s", addr, startTimeout, out.String()), err)
}
