package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrNotInstalled reports that a binary a launcher needs is missing. The
// launchers return it only when RELOCK_REQUIRE_REDIS is not 1; the tests
// then skip.
var ErrNotInstalled = errors.New("redistest: redis binaries not installed")

// lookPaths finds each binary, or reports which is missing: as
// ErrNotInstalled, or as a plain failure under RELOCK_REQUIRE_REDIS=1.
func lookPaths(names ...string) ([]string, error) {
	paths := make([]string, len(names))
	for i, n := range names {
		p, required, err := find(n)
		if err != nil {
			if required {
				return nil, fmt.Errorf("redistest: %s=1 but %s is not installed: %w", RequireEnv, n, err)
			}
			return nil, fmt.Errorf("%w: %s: %v", ErrNotInstalled, n, err)
		}
		paths[i] = p
	}
	return paths, nil
}

// skipOrFail ends tb after a launcher failed: a skip when the binaries
// are missing and not required, a failure otherwise.
func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, ErrNotInstalled) {
		tb.Skipf("%v (install redis-server, redis-cli and redis-sentinel to run it)", err)
	}
	tb.Fatal(err)
}

// clusterTimeout bounds cluster creation and every wait for the cluster
// to settle after a kill or a restart.
const clusterTimeout = 30 * time.Second

// NodeTimeout is the cluster's cluster-node-timeout: a master silent for
// this long is failed over to its replica (a few seconds later, after the
// replicas' election).
const NodeTimeout = 2 * time.Second

// A Cluster is a Redis Cluster of three masters with one replica each,
// every node a redis-server on a loopback port.
type Cluster struct {
	// Nodes are the cluster's servers in creation order: redis-cli made
	// the first three masters and the last three their replicas, but
	// kills and failovers change roles (see Masters).
	Nodes []*Server
}

// StartCluster starts a cluster for tb and stops it when tb ends. It
// skips tb when the binaries are missing, unless RELOCK_REQUIRE_REDIS=1,
// and under go test -short.
func StartCluster(tb testing.TB) *Cluster {
	tb.Helper()
	SkipShort(tb, "a Redis Cluster test (6 servers)")
	c, err := LaunchCluster()
	if err != nil {
		skipOrFail(tb, err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// LaunchCluster starts a cluster that the caller stops with Stop; TestMain
// uses it for a cluster shared by a package's tests. Its error matches
// ErrNotInstalled when the binaries are missing and not required.
func LaunchCluster() (*Cluster, error) {
	bins, err := lookPaths("redis-server", "redis-cli")
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	for range 6 {
		s, err := launchNode(bins[0])
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, bins[1], args...).CombinedOutput(); err != nil {
		c.Stop()
		return nil, fmt.Errorf("redistest: redis-cli --cluster create: %v: %s", err, out)
	}
	if err := c.WaitHealthy(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// launchNode starts one cluster-enabled redis-server. Its cluster bus
// gets a free port of its own (the default, port+10000, may be taken or
// out of range). The node's state file lives in its own directory, so a
// Restart rejoins the cluster under the same node ID. Replicas sync at
// once rather than after the default 5s diskless-sync delay. The node
// defines LockUser, allowed LockCommands and ClusterCommands.
func launchNode(bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "relock-cluster-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, limited: true}
	s.args = append([]string{
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(NodeTimeout.Milliseconds(), 10),
		"--repl-diskless-sync-delay", "0",
	}, userArgs(ClusterCommands...)...)
	err = s.startOnFreePort(bin, func() ([]string, error) {
		bus, err := freePort()
		return []string{"--cluster-port", strconv.Itoa(bus)}, err
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// Addrs returns the nodes' addresses in creation order.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, s := range c.Nodes {
		addrs[i] = s.Addr
	}
	return addrs
}

// Options returns go-redis cluster options seeded with every node.
func (c *Cluster) Options() *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:      c.Addrs(),
		ClientName: "relock-test-" + strconv.FormatInt(clientNames.Add(1), 10),
	}
}

// LockOptions returns the options relock's clients use: Options as
// LockUser, whom every node defines.
func (c *Cluster) LockOptions() *redis.ClusterOptions {
	o := c.Options()
	o.Username, o.Password = LockUser, LockPassword
	return o
}

// LockClient returns a go-redis cluster client with LockOptions, for
// relock, closed when tb ends.
func (c *Cluster) LockClient(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	cc := redis.NewClusterClient(c.LockOptions())
	tb.Cleanup(func() { cc.Close() })
	return cc
}

// Client returns a go-redis cluster client as the default user, for a
// test's own commands, closed when tb ends.
func (c *Cluster) Client(tb testing.TB) *redis.ClusterClient {
	tb.Helper()
	cc := c.NewClient()
	tb.Cleanup(func() { cc.Close() })
	return cc
}

// NewClient returns a go-redis cluster client that the caller closes.
func (c *Cluster) NewClient() *redis.ClusterClient {
	return redis.NewClusterClient(c.Options())
}

// Node returns the node listening on addr, or nil.
func (c *Cluster) Node(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr == addr {
			return s
		}
	}
	return nil
}

// Stop kills every node and removes their files. It is idempotent.
func (c *Cluster) Stop() {
	for _, s := range c.Nodes {
		s.Stop()
	}
}

// A NodeInfo is one line of CLUSTER NODES, as one node sees it.
type NodeInfo struct {
	ID, Addr string
	Flags    []string // myself, master, slave, fail, fail?, handshake, noaddr...
	MasterID string   // "-" for a master
	Slots    []string // "0-5460", ...
}

// Has reports whether the node carries flag.
func (n NodeInfo) Has(flag string) bool { return slices.Contains(n.Flags, flag) }

// View returns the cluster as the node at addr sees it.
func (c *Cluster) View(ctx context.Context, addr string) ([]NodeInfo, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	out, err := rdb.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	var nodes []NodeInfo
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("redistest: odd CLUSTER NODES line %q", line)
		}
		a, _, _ := strings.Cut(f[1], "@")
		nodes = append(nodes, NodeInfo{ID: f[0], Addr: a, Flags: strings.Split(f[2], ","), MasterID: f[3], Slots: f[8:]})
	}
	return nodes, nil
}

// Live returns the nodes whose process runs (not killed).
func (c *Cluster) Live() []*Server {
	var live []*Server
	for _, s := range c.Nodes {
		if s.cmd != nil {
			live = append(live, s)
		}
	}
	return live
}

// Masters returns the addresses of the masters serving slots, as the
// live nodes agree, sorted; an error when they do not agree yet.
func (c *Cluster) Masters(ctx context.Context) ([]string, error) {
	var agreed []string
	for i, s := range c.Live() {
		view, err := c.View(ctx, s.Addr)
		if err != nil {
			return nil, err
		}
		var masters []string
		for _, n := range view {
			if n.Has("master") && len(n.Slots) > 0 {
				masters = append(masters, n.Addr)
			}
		}
		slices.Sort(masters)
		if i > 0 && !slices.Equal(masters, agreed) {
			return nil, fmt.Errorf("redistest: %s sees masters %v, others %v", s.Addr, masters, agreed)
		}
		agreed = masters
	}
	return agreed, nil
}

// WaitHealthy waits until every live node reports cluster_state:ok and
// knows every node, the live nodes agree on three masters serving slots,
// all of them live (a killed master has been failed over), every live
// node sees every other live one as one of those masters or a replica of
// one, none flagged failing or in handshake, and every live replica's
// link to its master is up. It returns the last reason for not being healthy
// when ctx ends.
func (c *Cluster) WaitHealthy(ctx context.Context) error {
	var why error
	for {
		if why = c.healthy(ctx); why == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: cluster not healthy: %w (%v)", why, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) healthy(ctx context.Context) error {
	masters, err := c.Masters(ctx)
	if err != nil {
		return err
	}
	if len(masters) != 3 {
		return fmt.Errorf("masters %v", masters)
	}
	for _, m := range masters {
		if s := c.Node(m); s == nil || s.cmd == nil {
			return fmt.Errorf("master %s is not running", m)
		}
	}
	live := c.Live()
	for _, s := range live {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
		info, err := rdb.ClusterInfo(ctx).Result()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("%s: cluster_state not ok", s.Addr)
		}
		if err == nil && !strings.Contains(info, "cluster_known_nodes:"+strconv.Itoa(len(c.Nodes))+"\r") {
			err = fmt.Errorf("%s does not know every node yet", s.Addr)
		}
		var repl string
		if err == nil {
			repl, err = rdb.Info(ctx, "replication").Result()
		}
		rdb.Close()
		if err != nil {
			return err
		}
		if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
			return fmt.Errorf("replica %s not in sync with its master", s.Addr)
		}
		view, err := c.View(ctx, s.Addr)
		if err != nil {
			return err
		}
		serving := map[string]bool{}
		for _, n := range view {
			if n.Has("master") && len(n.Slots) > 0 {
				serving[n.ID] = true
			}
		}
		for _, n := range view {
			if node := c.Node(n.Addr); node == nil || node.cmd == nil {
				continue
			}
			if n.Has("fail") || n.Has("fail?") || n.Has("handshake") || n.Has("noaddr") {
				return fmt.Errorf("%s sees %s as %v", s.Addr, n.Addr, n.Flags)
			}
			// Every running node is known as a master serving slots or
			// as the replica of one.
			if !serving[n.ID] && !(n.Has("slave") && serving[n.MasterID]) {
				return fmt.Errorf("%s sees %s as %v of %s", s.Addr, n.Addr, n.Flags, n.MasterID)
			}
		}
	}
	return nil
}

// Kill stops node addr with SIGKILL. Its replica takes over its slots
// after about NodeTimeout (see WaitHealthy); Restart brings it back.
func (c *Cluster) Kill(addr string) error {
	s := c.Node(addr)
	if s == nil {
		return fmt.Errorf("redistest: no node %s", addr)
	}
	s.Kill()
	return nil
}

// Restart starts killed node addr again, empty but with its cluster
// state: a master that was failed over rejoins as a replica of the
// master that replaced it.
func (c *Cluster) Restart(addr string) error {
	s := c.Node(addr)
	if s == nil {
		return fmt.Errorf("redistest: no node %s", addr)
	}
	return s.Restart()
}

// MoveSlot migrates slot, with its keys, to the master at to, the way
// redis-cli --cluster reshard does: IMPORTING on the target, MIGRATING
// on the source, MIGRATE of the slot's keys, then SETSLOT NODE on the
// target, the source and the other masters.
func (c *Cluster) MoveSlot(ctx context.Context, slot int, to string) error {
	masters, err := c.Masters(ctx)
	if err != nil {
		return err
	}
	view, err := c.View(ctx, to)
	if err != nil {
		return err
	}
	var from, fromID, toID string
	for _, n := range view {
		if n.Addr == to {
			toID = n.ID
		}
		if n.Has("master") && servesSlot(n.Slots, slot) {
			from, fromID = n.Addr, n.ID
		}
	}
	if from == "" || toID == "" {
		return fmt.Errorf("redistest: slot %d: no owner or no node %s", slot, to)
	}
	if from == to {
		return nil
	}
	src := redis.NewClient(&redis.Options{Addr: from})
	defer src.Close()
	dst := redis.NewClient(&redis.Options{Addr: to})
	defer dst.Close()
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID).Err(); err != nil {
		return err
	}
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", toID).Err(); err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(to)
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", host, port, "", 0, 5000, "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := src.Do(ctx, args...).Err(); err != nil {
			return err
		}
	}
	order := []string{to, from}
	for _, m := range masters {
		if m != to && m != from {
			order = append(order, m)
		}
	}
	for _, m := range order {
		rdb := redis.NewClient(&redis.Options{Addr: m})
		err := rdb.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", toID).Err()
		rdb.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func servesSlot(ranges []string, slot int) bool {
	for _, r := range ranges {
		lo, hi, ok := strings.Cut(r, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.Atoi(lo)
		b, err2 := strconv.Atoi(hi)
		if err1 == nil && err2 == nil && a <= slot && slot <= b {
			return true
		}
	}
	return false
}

// WaitFailover waits until every running node but old agrees on three
// masters serving slots, old not among them: old's replica has taken
// over. Old itself is not asked, so it may be paused rather than killed.
func (c *Cluster) WaitFailover(ctx context.Context, old string) error {
	var why error
	for {
		if why = c.failedOver(ctx, old); why == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redistest: %s not failed over: %w (%v)", old, why, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (c *Cluster) failedOver(ctx context.Context, old string) error {
	var agreed []string
	for _, s := range c.Live() {
		if s.Addr == old {
			continue
		}
		view, err := c.View(ctx, s.Addr)
		if err != nil {
			return err
		}
		var masters []string
		for _, n := range view {
			if n.Has("master") && len(n.Slots) > 0 {
				masters = append(masters, n.Addr)
			}
		}
		slices.Sort(masters)
		switch {
		case slices.Contains(masters, old):
			return fmt.Errorf("%s still sees %s serving slots", s.Addr, old)
		case len(masters) != 3:
			return fmt.Errorf("%s sees masters %v", s.Addr, masters)
		case agreed != nil && !slices.Equal(masters, agreed):
			return fmt.Errorf("%s sees masters %v, others %v", s.Addr, masters, agreed)
		}
		agreed = masters
	}
	return nil
}

// Replicas returns the addresses of master's replicas, as master sees
// them.
func (c *Cluster) Replicas(ctx context.Context, master string) ([]string, error) {
	view, err := c.View(ctx, master)
	if err != nil {
		return nil, err
	}
	var id string
	for _, n := range view {
		if n.Addr == master {
			id = n.ID
		}
	}
	var replicas []string
	for _, n := range view {
		if n.MasterID == id {
			replicas = append(replicas, n.Addr)
		}
	}
	return replicas, nil
}
