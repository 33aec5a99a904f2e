package securetest_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock/internal/testing/clitest"
	"github.com/relock-go/relock/internal/testing/redistest"
	"github.com/relock-go/relock/reentrant"
)

// TestCLIOverTLS runs the relock command with -tls -cacert -cert -key in
// its three modes against servers that take only TLS with a client
// certificate: a Redis Cluster of three masters whose bus is TLS too
// (tls-cluster), a Sentinel over TLS watching a TLS master, and that
// master alone. Each mode lists and inspects locks held by relock over
// TLS; on the cluster, one on each master, and the doctor reads them
// all; without -tls nothing is reached.
func TestCLIOverTLS(t *testing.T) {
	redistest.SkipShort(t, "a TLS test (a TLS cluster and a TLS Sentinel)")
	bins := need(t, "redis-server", "redis-cli")
	dir := t.TempDir()
	tc := redistest.WriteCerts(t, dir)
	tlsFlags := []string{"-tls", "-cacert", filepath.Join(dir, "ca.crt"),
		"-cert", filepath.Join(dir, "client.crt"), "-key", filepath.Join(dir, "client.key")}
	bin := clitest.Build(t)
	bg := context.Background()

	t.Run("Cluster", func(t *testing.T) {
		var seeds []string
		for range 3 {
			bus, err := freePort()
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, startTLS(t, bins[0], dir, tc, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-port", strconv.Itoa(bus), "--tls-cluster", "yes"))
		}
		ctx, cancel := context.WithTimeout(bg, 30*time.Second)
		defer cancel()
		args := append([]string{"--tls", "--cacert", filepath.Join(dir, "ca.crt"), "--cert", filepath.Join(dir, "client.crt"),
			"--key", filepath.Join(dir, "client.key"), "--cluster", "create"}, seeds...)
		args = append(args, "--cluster-replicas", "0", "--cluster-yes")
		if out, err := exec.CommandContext(ctx, bins[1], args...).CombinedOutput(); err != nil {
			t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
		}
		for _, s := range seeds {
			node := redis.NewClient(&redis.Options{Addr: s, TLSConfig: tc})
			redistest.Eventually(t, 30*time.Second, "cluster_state:ok on "+s, func() bool {
				info, err := node.ClusterInfo(ctx).Result()
				return err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3\r")
			})
			node.Close()
		}
		rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds, TLSConfig: tc})
		t.Cleanup(func() { rdb.Close() })
		names := map[string]string{} // master address: a name whose slot it serves
		for i := 0; len(names) < 3 && i < 1000; i++ {
			name := "tls:" + strconv.Itoa(i)
			node, err := rdb.MasterForKey(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := names[node.Options().Addr]; !ok {
				names[node.Options().Addr] = name
			}
		}
		if len(names) != 3 {
			t.Fatalf("no name on every master: %v", names)
		}
		rc := redistest.Relock(t, rdb, nil)
		for _, name := range names {
			hold(t, reentrant.New(rc, name, nil))
		}
		conn := append([]string{"-cluster", strings.Join(seeds, ",")}, tlsFlags...)
		out := ok(t, bin, append(conn, "list", "tls:*")...)
		for master, name := range names {
			if !regexp.MustCompile(`(?m)^` + name + ` +lock +\S+ +relock ` + rc.ID()[:8] + `:`).MatchString(out) {
				t.Errorf("list has no row for %s, on %s:\n%s", name, master, out)
			}
			if out := ok(t, bin, append(conn, "inspect", name)...); !strings.Contains(out, rc.ID()) {
				t.Errorf("inspect %s (on %s) does not name the holder %s:\n%s", name, master, rc.ID(), out)
			}
		}
		if out := ok(t, bin, append(conn, "doctor")...); out != "no problems found in 3 records\n" {
			t.Errorf("doctor printed %q, want 3 healthy records", out)
		}
		refused(t, bin, "-cluster", strings.Join(seeds, ","), "list")
	})

	t.Run("Sentinel", func(t *testing.T) {
		master := startTLS(t, bins[0], dir, tc)
		host, port, _ := net.SplitHostPort(master)
		conf := filepath.Join(t.TempDir(), "sentinel.conf")
		text := fmt.Sprintf("sentinel monitor %[1]s %[2]s %[3]s 1\nsentinel down-after-milliseconds %[1]s 5000\n", redistest.MasterName, host, port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		// Sentinel reaches the master over TLS (tls-replication) and
		// takes TLS clients with certificates, as the data servers do.
		sentinel := startTLS(t, bins[0], dir, tc, conf, "--sentinel", "--tls-replication", "yes")
		sc := redis.NewSentinelClient(&redis.Options{Addr: sentinel, TLSConfig: tc})
		t.Cleanup(func() { sc.Close() })
		redistest.Eventually(t, 30*time.Second, "the sentinel sees the master", func() bool {
			m, err := sc.Master(bg, redistest.MasterName).Result()
			return err == nil && m["flags"] == "master"
		})
		rdb := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: redistest.MasterName, SentinelAddrs: []string{sentinel}, TLSConfig: tc})
		t.Cleanup(func() { rdb.Close() })
		rc := redistest.Relock(t, rdb, nil)
		hold(t, reentrant.New(rc, "tls:sentinel", nil))
		for _, conn := range [][]string{
			append([]string{"-sentinel", sentinel, "-master", redistest.MasterName}, tlsFlags...),
			append([]string{"-url", master}, tlsFlags...),
		} {
			if out := ok(t, bin, append(conn, "list")...); !regexp.MustCompile(`(?m)^tls:sentinel +lock +\S+ +relock ` + rc.ID()[:8] + `:`).MatchString(out) {
				t.Errorf("relock %v list printed\n%s\nwant tls:sentinel held by %s", conn, out, rc.ID())
			}
			if out := ok(t, bin, append(conn, "inspect", "tls:sentinel")...); !strings.Contains(out, rc.ID()) {
				t.Errorf("relock %v inspect printed\n%s\nwant the holder %s", conn, out, rc.ID())
			}
		}
		refused(t, bin, "-sentinel", sentinel, "-master", redistest.MasterName, "list")
	})
}

// need returns the paths of the binaries, skipping t without them unless
// RELOCK_REQUIRE_REDIS=1.
func need(t *testing.T, names ...string) []string {
	t.Helper()
	paths := make([]string, len(names))
	for i, n := range names {
		p, err := exec.LookPath(n)
		switch {
		case err != nil && os.Getenv(redistest.RequireEnv) == "1":
			t.Fatalf("%s=1 but %s is not installed: %v", redistest.RequireEnv, n, err)
		case err != nil:
			t.Skipf("needs %s (install it to run this test)", n)
		}
		paths[i] = p
	}
	return paths
}

// hold locks mu until t ends.
func hold(t *testing.T, mu *reentrant.Mutex) {
	t.Helper()
	ctx, err := mu.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mu.Unlock(ctx) })
}

// startTLS runs redis-server on a free loopback port that takes only TLS
// clients with a certificate signed by the CA in dir (redistest.WriteCerts),
// with args added ("<sentinel.conf> --sentinel" first for a sentinel);
// it is killed when t ends. It returns the server's address once it
// answers.
func startTLS(t *testing.T, bin, dir string, tc *tls.Config, args ...string) string {
	t.Helper()
	var err error
	for range 5 { // a free port may be taken before the server binds it
		var port int
		if port, err = freePort(); err != nil {
			continue
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if err = runTLS(t, bin, dir, addr, tc, args); err == nil {
			return addr
		}
	}
	t.Fatal(err)
	return ""
}

func runTLS(t *testing.T, bin, dir, addr string, tc *tls.Config, args []string) error {
	_, port, _ := net.SplitHostPort(addr)
	data := t.TempDir()
	var cmdArgs []string
	if len(args) > 1 && args[1] == "--sentinel" {
		// Sentinel mode reads (and rewrites) its configuration file,
		// which must come first.
		cmdArgs, args = args[:2], args[2:]
	}
	cmdArgs = append(cmdArgs, "--port", "0", "--tls-port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", data, "--daemonize", "no", "--loglevel", "warning",
		"--tls-cert-file", filepath.Join(dir, "server.crt"), "--tls-key-file", filepath.Join(dir, "server.key"),
		"--tls-ca-cert-file", filepath.Join(dir, "ca.crt"), "--tls-auth-clients", "yes")
	cmd := exec.Command(bin, append(cmdArgs, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	stop := func() { _ = cmd.Process.Kill(); <-exited }
	c := redis.NewClient(&redis.Options{Addr: addr, TLSConfig: tc, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			return fmt.Errorf("redis-server on %s exited: %s", addr, out.String())
		default:
		}
		if c.Ping(context.Background()).Err() == nil {
			t.Cleanup(stop)
			return nil
		}
	}
	stop()
	return fmt.Errorf("redis-server on %s did not answer over TLS: %s", addr, out.String())
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ok runs the command with args, bounded in time, and returns its
// output, failing t unless it succeeds with nothing on stderr.
func ok(t *testing.T, bin string, args ...string) string {
	t.Helper()
	out, errs, code := clitest.Run(t, bin, args...)
	if code != 0 || errs != "" {
		t.Fatalf("relock %v: exit %d, stderr %q", args, code, errs)
	}
	return out
}

// refused checks that the command, run without TLS, cannot reach Redis.
func refused(t *testing.T, bin string, args ...string) {
	t.Helper()
	_, errs, code := clitest.Run(t, bin, append([]string{"-timeout", "1s"}, args...)...)
	if code != 1 || !strings.Contains(errs, "cannot reach Redis") {
		t.Fatalf("relock %v without TLS: exit %d, stderr %q, want 1 and cannot reach", args, code, errs)
	}
}
