package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name under which a Sentinel's sentinels monitor its
// master.
const MasterName = "relock-master"

// DownAfter is the sentinels' down-after-milliseconds: a master silent for
// this long is subjectively down, and failed over once two sentinels
// agree.
const DownAfter = time.Second

// A Sentinel is a master with two replicas watched by three sentinels,
// every process on a loopback port.
type Sentinel struct {
	// Data are the data servers: Data[0] started as the master, the
	// others as its replicas; a failover changes roles (see MasterAddr).
	Data []*Server
	// Sentinels are the redis-sentinel processes.
	Sentinels []*Server
}

// StartSentinel starts a sentinel deployment for tb and stops it when tb
// ends. It skips tb when the binaries are missing, unless
// RELOCK_REQUIRE_REDIS=1, and under go test -short.
func StartSentinel(tb testing.TB) *Sentinel {
	tb.Helper()
	SkipShort(tb, "a Sentinel test (3 servers and 3 sentinels, failovers)")
	s, err := LaunchSentinel()
	if err != nil {
		skipOrFail(tb, err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// LaunchSentinel starts a sentinel deployment that the caller stops with
// Stop. Its error matches ErrNotInstalled when the binaries are missing
// and not required.
func LaunchSentinel() (*Sentinel, error) {
	if _, err := lookPaths("redis-server", "redis-sentinel"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	s := &Sentinel{}
	fail := func(err error) (*Sentinel, error) {
		s.Stop()
		return nil, err
	}
	// Replicas sync at once, not after the default 5s diskless delay.
	master, err := Launch("--repl-diskless-sync-delay", "0")
	if err != nil {
		return fail(err)
	}
	s.Data = append(s.Data, master)
	host, port, _ := net.SplitHostPort(master.Addr)
	for range 2 {
		r, err := Launch("--replicaof", host, port, "--repl-diskless-sync-delay", "0")
		if err != nil {
			return fail(err)
		}
		s.Data = append(s.Data, r)
	}
	// Sentinels learn the replicas from the master's INFO, which they
	// read at once and then only every 10s: start them once the replicas
	// are attached.
	for _, r := range s.Data[1:] {
		if err := waitSynced(ctx, r.Addr); err != nil {
			return fail(err)
		}
	}
	for range 3 {
		sen, err := launchSentinel(master.Addr)
		if err != nil {
			return fail(err)
		}
		s.Sentinels = append(s.Sentinels, sen)
	}
	if err := s.waitReady(ctx); err != nil {
		return fail(err)
	}
	return s, nil
}

// launchSentinel starts a redis-sentinel monitoring master, with a
// configuration file of its own (sentinels rewrite theirs).
func launchSentinel(master string) (*Server, error) {
	bin, err := lookPaths("redis-server")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "relock-sentinel-")
	if err != nil {
		return nil, err
	}
	host, port, _ := net.SplitHostPort(master)
	conf := filepath.Join(dir, "sentinel.conf")
	text := fmt.Sprintf(`sentinel monitor %[1]s %[2]s %[3]s 2
sentinel down-after-milliseconds %[1]s %[4]d
sentinel failover-timeout %[1]s 3000
sentinel parallel-syncs %[1]s 2
`, MasterName, host, port, DownAfter.Milliseconds())
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s := &Server{dir: dir, conf: conf}
	for try := 0; ; try++ {
		port, err := freePort()
		if err == nil {
			s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
			err = s.exec(bin[0])
		}
		if err == nil {
			return s, nil
		}
		if try == 4 {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// waitSynced waits until the replica at addr has a working link to its
// master.
func waitSynced(ctx context.Context, addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer rdb.Close()
	for {
		info, err := rdb.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: replica %s not in sync: %v (%v)", addr, err, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// waitReady waits until every sentinel sees the master up, both replicas
// up and in sync, and the two other sentinels (which a failover needs
// for its quorum and leader election).
func (s *Sentinel) waitReady(ctx context.Context) error {
	var why error
	for {
		if why = s.ready(ctx); why == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: sentinels not ready: %w (%v)", why, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Sentinel) ready(ctx context.Context) error {
	for _, sen := range s.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: sen.Addr, MaxRetries: -1})
		m, err := sc.Master(ctx, MasterName).Result()
		var replicas []map[string]string
		if err == nil {
			replicas, err = sc.Replicas(ctx, MasterName).Result()
		}
		sc.Close()
		switch {
		case err != nil:
			return err
		case m["flags"] != "master" || m["num-slaves"] != "2" || m["num-other-sentinels"] != "2":
			return fmt.Errorf("sentinel %s sees master %s as %s with %s replicas and %s other sentinels",
				sen.Addr, m["port"], m["flags"], m["num-slaves"], m["num-other-sentinels"])
		}
		for _, r := range replicas {
			if r["flags"] != "slave" || r["master-link-status"] != "ok" {
				return fmt.Errorf("sentinel %s sees replica %s as %s, link %s", sen.Addr, r["name"], r["flags"], r["master-link-status"])
			}
		}
	}
	return nil
}

// SentinelAddrs returns the sentinels' addresses.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.Sentinels))
	for i, sen := range s.Sentinels {
		addrs[i] = sen.Addr
	}
	return addrs
}

// FailoverOptions returns go-redis options for a client that follows the
// master through failovers.
func (s *Sentinel) FailoverOptions() *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:    MasterName,
		SentinelAddrs: s.SentinelAddrs(),
		ClientName:    "relock-test-" + strconv.FormatInt(clientNames.Add(1), 10),
	}
}

// Client returns a failover client (redis.NewFailoverClient), closed when
// tb ends.
func (s *Sentinel) Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := s.NewClient()
	tb.Cleanup(func() { c.Close() })
	return c
}

// NewClient returns a failover client that the caller closes.
func (s *Sentinel) NewClient() *redis.Client {
	return redis.NewFailoverClient(s.FailoverOptions())
}

// Node returns the data server listening on addr, or nil.
func (s *Sentinel) Node(addr string) *Server {
	for _, d := range s.Data {
		if d.Addr == addr {
			return d
		}
	}
	return nil
}

// MasterAddr returns the master's address as every running sentinel
// reports it, or an error when they disagree.
func (s *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var agreed string
	for _, sen := range s.Sentinels {
		if sen.cmd == nil {
			continue
		}
		sc := redis.NewSentinelClient(&redis.Options{Addr: sen.Addr, MaxRetries: -1})
		hp, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
		sc.Close()
		if err != nil {
			return "", err
		}
		addr := net.JoinHostPort(hp[0], hp[1])
		if agreed != "" && addr != agreed {
			return "", fmt.Errorf("redistest: sentinels disagree on the master: %s, %s", agreed, addr)
		}
		agreed = addr
	}
	return agreed, nil
}

// KillMaster kills the current master with SIGKILL and returns its
// address.
func (s *Sentinel) KillMaster(ctx context.Context) (string, error) {
	addr, err := s.MasterAddr(ctx)
	if err != nil {
		return "", err
	}
	d := s.Node(addr)
	if d == nil {
		return "", fmt.Errorf("redistest: master %s is not one of the data servers", addr)
	}
	d.Kill()
	return addr, nil
}

// WaitPromotion waits until every running sentinel reports a master other
// than old and that server answers as a master; it returns the new
// master's address.
func (s *Sentinel) WaitPromotion(ctx context.Context, old string) (string, error) {
	var why error
	for {
		addr, err := s.MasterAddr(ctx)
		if err == nil && addr == old {
			err = fmt.Errorf("sentinels still report %s", old)
		}
		if err == nil {
			rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
			var info string
			info, err = rdb.Info(ctx, "replication").Result()
			rdb.Close()
			if err == nil && !strings.Contains(info, "role:master") {
				err = fmt.Errorf("%s is not a master yet", addr)
			}
		}
		if err == nil {
			return addr, nil
		}
		why = err
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("redistest: no promotion: %w (%v)", why, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop kills every process and removes their files. It is idempotent.
func (s *Sentinel) Stop() {
	for _, sen := range s.Sentinels {
		sen.Stop()
	}
	for _, d := range s.Data {
		d.Stop()
	}
}
