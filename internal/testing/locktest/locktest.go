// Package locktest is the behaviour suite every relock lock type must
// pass: reentrancy through the context (or its refusal), unlock rules,
// waits and wake-ups (or polls), the watchdog and fixed leases, mutual
// exclusion, bad input and Close.
// A lock package runs it from its tests with a Kind describing how to
// build its lock (Run, on one server); internal/clustertest runs it for
// every kind in All on a Redis Cluster (RunCluster), internal/securetest
// as a limited user. Checks particular to
// one type (its Redis layout) stay in that package.
package locktest

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// Lock is what the suite needs of a lock type.
type Lock interface {
	relock.Locker
	ForceUnlock(ctx context.Context) (bool, error)
	IsLocked(ctx context.Context) (bool, error)
	IsHeld(ctx context.Context) (bool, error)
	HoldCount(ctx context.Context) (int, error)
	TTL(ctx context.Context) (time.Duration, error)
}

// A Kind describes a lock type to the suite.
type Kind struct {
	// Name names the kind's subtests where a suite ranges over All.
	Name string

	// New returns the lock named name on rc, with a fixed lease, or
	// renewed by the watchdog when lease is 0. rc may be nil and lease
	// negative: the suite checks that such locks report errors.
	New func(rc *relock.Client, name string, lease time.Duration) Lock

	// Residue lists the keys besides the lock's hash that a lock named
	// name may create (a fair lock's queue); the suite checks that waits
	// that end leave them empty.
	Residue func(name string) []string

	// Channel is the release channel of lock name, or the prefix of its
	// waiters' channels; nil means Redisson's RLock channel,
	// redisson_lock__channel:{name}.
	Channel func(name string) string

	// Reentry, for a non-reentrant kind, is the error a Lock by an owner
	// that holds the lock returns at once; the suite checks it where
	// reentrant kinds re-enter. nil for reentrant kinds.
	Reentry error

	// Poll, for a kind whose waiters poll instead of listening (a spin
	// lock), is the longest sleep between their attempts: the suite
	// checks that they subscribe to nothing and take a released lock
	// within it, where listening kinds are woken. Zero for listening
	// kinds.
	Poll time.Duration

	// FIFO tells that the kind's waiters queue in order (the fair
	// locks): RunFairKind's order suite applies to it.
	FIFO bool

	// Grants tells that a release may hand the lock to the waiter it
	// wakes (the fair and reentrant locks): the suite races such grants
	// with re-entries of the waiter's owner.
	Grants bool

	// NoForce tells that the kind has no ForceUnlock (Basic): RunLate's
	// churn then forces nothing.
	NoForce bool

	// Shared tells that several owners may hold the lock at once (a
	// read lock): RunLate's churn checks no exclusion.
	Shared bool

	// Left, if set, is the churn's Churn.Left: the keys besides relock's
	// records of given-up attempts that may outlive it (an election's
	// term counter).
	Left func(key string) bool

	// Prepare, if set, readies name on rc before the explorer's holder
	// takes it (a semaphore's count of one); Check, if set, must then
	// hold once a seed ran, besides the explorer's own checks (the
	// count whole again, read through raw).
	Prepare func(ctx context.Context, rc *relock.Client, name string) error
	Check   func(ctx context.Context, raw redis.UniversalClient, name string) error
}

// RunLate runs the suite's checks of what a call leaves behind when it
// gives up (a late attempt, the churn, the reordering explorer) against
// locks of kind k on srv: for a lock type that the whole suite does not
// fit, such as a MultiLock (Basic).
func RunLate(t *testing.T, srv *redistest.Server, k Kind) {
	(&env{srv: srv, k: k}).runAll(t, late)
}

// RunExplore runs the reordering explorer alone against locks of kind k
// on srv: for a synchronizer that stands for a lock through an adapter
// (a semaphore of one permit), with Kind.Prepare and Kind.Check.
func RunExplore(t *testing.T, srv *redistest.Server, k Kind) {
	(&env{srv: srv, k: k}).runAll(t, []test{{"Explore", explore, false}})
}

// late is RunLate's part of the suite.
var late = []test{
	{"LateAttempts", lateAttempts, false},
	{"Churn", churn, false},
	{"Explore", explore, false},
}

// Basic adapts a relock.Locker without the state queries and the
// ForceUnlock of Lock (a MultiLock) to Lock, for RunLate, whose checks
// use none of them (with Kind.NoForce set): they return
// errors.ErrUnsupported.
func Basic(l relock.Locker) Lock { return basic{l} }

type basic struct{ relock.Locker }

func (basic) ForceUnlock(context.Context) (bool, error)  { return false, errors.ErrUnsupported }
func (basic) IsLocked(context.Context) (bool, error)     { return false, errors.ErrUnsupported }
func (basic) IsHeld(context.Context) (bool, error)       { return false, errors.ErrUnsupported }
func (basic) HoldCount(context.Context) (int, error)     { return 0, errors.ErrUnsupported }
func (basic) TTL(context.Context) (time.Duration, error) { return 0, errors.ErrUnsupported }

// Run runs the suite against locks of kind k on srv, a server the calling
// package started.
func Run(t *testing.T, srv *redistest.Server, k Kind) {
	(&env{srv: srv, k: k}).runAll(t, shared)
}

// RunCluster runs the suite against locks of kind k on c, a cluster the
// calling package started. Its relock clients take the default
// PubSubAuto, so on Redis 7 their waiters use sharded pub/sub.
func RunCluster(t *testing.T, c *redistest.Cluster, k Kind) {
	(&env{cluster: c, k: k}).runAll(t, shared)
}

// A test is one test of a suite, run as a subtest.
type test struct {
	name string
	run  func(*testing.T, *env)
	// waits: the test spends its time waiting out leases, renewal
	// rounds or quiet periods, on keys and relock clients of its own (or
	// a server of its own), and checks nothing server-wide, so that under
	// -short it may run alongside the others that wait (runAll).
	waits bool
}

// shared is the suite every lock type passes.
var shared = []test{
	{"ReentrancyFollowsContext", reentrancyFollowsContext, false},
	{"SameOwnerWaiters", sameOwnerWaiters, false},
	{"SameOwnerReentryRacesGrant", sameOwnerReentryRacesGrant, false},
	{"UnlockByNonOwner", unlockByNonOwner, false},
	{"UnlockWithoutOwner", unlockWithoutOwner, false},
	{"UnlockCancelledContext", unlockCancelledContext, false},
	{"ContextCancelledByUnlock", contextCancelledByUnlock, false},
	{"TryLock", tryLock, true},
	{"LockCancelledMidWait", lockCancelledMidWait, false},
	{"LateAttempts", lateAttempts, false},
	{"Churn", churn, false},
	{"ChurnCatchesLeak", churnCatchesLeak, false},
	{"GoneBounded", goneBounded, true},
	{"Explore", explore, false},
	{"WakeUpNotPolling", wakeUpNotPolling, false},
	{"OneSubscriptionConnection", oneSubscriptionConnection, false},
	{"WatchdogKeepsLock", watchdogKeepsLock, true},
	{"WatchdogLossDeleted", watchdogLossDeleted, true},
	{"WatchdogLossUnreachable", watchdogLossUnreachable, true},
	{"WatchdogBatches", watchdogBatches, true},
	{"FixedLease", fixedLease, true},
	{"HandoffLeases", handoffLeases, true},
	{"ForceUnlock", forceUnlock, false},
	{"ForceUnlockTellsHolder", forceUnlockTellsHolder, false},
	{"ForceUnlockRetaken", forceUnlockRetaken, true},
	{"ForceUnlockRedissonHolder", forceUnlockRedissonHolder, false},
	{"MutualExclusion", mutualExclusion, false},
	{"BadInput", badInput, false},
	{"Close", closeClient, false},
}

// runAll runs tests as subtests of t on e, and then checks that no
// limited server logged a denied command. Under -short t runs in
// parallel with the package's other tests marked so (redistest.Parallel),
// and the tests that wait (test.waits) start at once, each from a
// goroutine of its own (t.Parallel's limit of GOMAXPROCS would serialize
// them), so that their waits overlap each other and the rest of the
// suite, which runs in order meanwhile; otherwise every test runs alone,
// in order.
func (e *env) runAll(t *testing.T, tests []test) {
	redistest.Parallel(t)
	e.resetDenied(t)
	defer e.checkDenied(t)
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, tc := range tests {
		if testing.Short() && tc.waits {
			wg.Go(func() { t.Run(tc.name, func(t *testing.T) { tc.run(t, e) }) })
		}
	}
	for _, tc := range tests {
		if !testing.Short() || !tc.waits {
			t.Run(tc.name, func(t *testing.T) { tc.run(t, e) })
		}
	}
}

// env is the suite's shared state: the deployment it runs on, a single
// server or a cluster (exactly one of srv and cluster is set), and the
// lock type.
type env struct {
	srv     *redistest.Server
	cluster *redistest.Cluster
	k       Kind
}

// redis returns a go-redis client of the deployment as the default user,
// for the suite's own commands, closed when t ends.
func (e *env) redis(t testing.TB) redis.UniversalClient {
	t.Helper()
	if e.cluster != nil {
		return e.cluster.Client(t)
	}
	return e.srv.Client(t)
}

// lockRedis returns a go-redis client for relock, as if of a separate
// process, closed when t ends: on a limited deployment (a cluster, or a
// server from redistest.StartSecure) it logs in as redistest.LockUser.
func (e *env) lockRedis(t testing.TB) redis.UniversalClient {
	t.Helper()
	if e.cluster != nil {
		return e.cluster.LockClient(t)
	}
	return e.srv.LockClient(t)
}

// redisWith is lockRedis with options changed by set: a *redis.Client on
// a single server, a *redis.ClusterClient on a cluster.
func (e *env) redisWith(t testing.TB, set func(*redis.UniversalOptions)) redis.UniversalClient {
	t.Helper()
	var o *redis.UniversalOptions
	if e.cluster != nil {
		co := e.cluster.LockOptions()
		o = &redis.UniversalOptions{IsClusterMode: true, Addrs: co.Addrs, Username: co.Username, Password: co.Password}
	} else {
		so := e.srv.LockOptions()
		o = &redis.UniversalOptions{Addrs: []string{so.Addr}, Username: so.Username, Password: so.Password, TLSConfig: so.TLSConfig}
	}
	set(o)
	rdb := redis.NewUniversalClient(o)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// client returns a relock client with its own go-redis client
// (lockRedis), as if it were a separate process; both close when t ends.
func (e *env) client(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, e.lockRedis(t), opts)
}

// isolated returns an env whose deployment carries only what t does, for
// tests that count a server's commands or connections: a fresh real
// server in single-server mode (skipping t on miniredis), over TLS if e's
// is, whose ACL LOG is checked when t ends. A cluster is shared as it is:
// the suite's tests run one at a time and each uses names of its own, so
// during a test the cluster carries only its traffic.
func (e *env) isolated(t testing.TB) *env {
	t.Helper()
	if e.cluster != nil {
		return e
	}
	// Both check their ACL LOG when t ends.
	if e.srv.TLS() {
		return &env{srv: redistest.StartSecure(t), k: e.k}
	}
	s := redistest.Start(t)
	s.RequireReal(t)
	return &env{srv: s, k: e.k}
}

// limitedServers returns the servers of the deployment that define
// redistest.LockUser: every node of a cluster, or the server if limited.
func (e *env) limitedServers() []*redistest.Server {
	if e.cluster != nil {
		return e.cluster.Live()
	}
	if e.srv.Limited() {
		return []*redistest.Server{e.srv}
	}
	return nil
}

// resetDenied empties the ACL LOG of every limited server, so that
// checkDenied sees what the suite did only.
func (e *env) resetDenied(t testing.TB) {
	t.Helper()
	for _, s := range e.limitedServers() {
		c := s.NewClient()
		err := c.Do(context.Background(), "ACL", "LOG", "RESET").Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkDenied fails t if a limited server logged a denied command, key
// or channel: relock ran as redistest.LockUser with only the commands
// docs/operations.md lists.
func (e *env) checkDenied(t testing.TB) {
	t.Helper()
	for _, s := range e.limitedServers() {
		if err := s.CheckDenied(); err != nil {
			t.Error(err)
		}
	}
}

// masters returns a client of each master of the deployment (the
// server itself on a single server), closed when t ends.
func (e *env) masters(t testing.TB) []*redis.Client {
	t.Helper()
	if e.cluster == nil {
		return []*redis.Client{e.srv.Client(t)}
	}
	addrs, err := e.cluster.Masters(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var cs []*redis.Client
	for _, a := range addrs {
		cs = append(cs, e.cluster.Node(a).Client(t))
	}
	return cs
}

// servers returns a client of every running server of the deployment,
// closed when t ends.
func (e *env) servers(t testing.TB) []*redis.Client {
	t.Helper()
	if e.cluster == nil {
		return []*redis.Client{e.srv.Client(t)}
	}
	var cs []*redis.Client
	for _, s := range e.cluster.Live() {
		cs = append(cs, s.Client(t))
	}
	return cs
}

// nodeFor returns the server of rdb's deployment that owns key: rdb
// itself, or the master serving key's slot (a client that rdb closes).
func nodeFor(t testing.TB, rdb redis.UniversalClient, key string) *redis.Client {
	t.Helper()
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb.(*redis.Client)
	}
	node, err := cc.MasterForKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return node
}

// pause freezes the server owning key (SIGSTOP): connections stay open
// but nothing is answered. The returned resume undoes it; it also runs
// when t ends, and a second call does nothing. On a cluster the pause
// must stay well below redistest.NodeTimeout, or the master is failed
// over.
func (e *env) pause(t testing.TB, key string) (resume func()) {
	t.Helper()
	s := e.srv
	if e.cluster != nil {
		s = e.cluster.Node(nodeFor(t, e.redis(t), key).Options().Addr)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	resume = func() {
		once.Do(func() {
			if err := s.Resume(); err != nil {
				t.Error(err)
			}
			if e.cluster != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := e.cluster.WaitHealthy(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
	t.Cleanup(resume)
	return resume
}

func holdCount(t testing.TB, mu Lock, ctx context.Context) int {
	t.Helper()
	n, err := mu.HoldCount(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// channel is the release channel of lock name (Kind.Channel), or the
// prefix of its waiters' channels.
func (e *env) channel(name string) string {
	if e.k.Channel != nil {
		return e.k.Channel(name)
	}
	return "redisson_lock__channel:{" + name + "}"
}

// subscribers counts the subscriptions on the release channels of lock
// name: Kind.Channel and the per-waiter channels a fair lock derives from
// it. On a cluster they are sharded channels, on the master serving the
// name's slot.
func (e *env) subscribers(t testing.TB, rdb redis.UniversalClient, name string) int64 {
	t.Helper()
	ctx := context.Background()
	prefix := e.channel(name)
	node := nodeFor(t, rdb, prefix)
	_, sharded := rdb.(*redis.ClusterClient)
	list, numsub := node.PubSubChannels, node.PubSubNumSub
	if sharded {
		list, numsub = node.PubSubShardChannels, node.PubSubShardNumSub
	}
	chans, err := list(ctx, globEscape(prefix)+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(chans) == 0 {
		return 0
	}
	counts, err := numsub(ctx, chans...).Result()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	return n
}

func globEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// assertOnlyHolder checks that hctx's owner is the lock's only holder,
// with one hold, and that nothing else is left in Redis for the lock.
func (e *env) assertOnlyHolder(t testing.TB, mu Lock, hctx context.Context) {
	t.Helper()
	raw := e.redis(t)
	fields := raw.HGetAll(context.Background(), mu.Name()).Val()
	delete(fields, "mode") // a read/write lock's mode field
	if n := holdCount(t, mu, hctx); n != 1 || len(fields) != 1 {
		t.Fatalf("lock %s: fields %v, holder count %d: want the holder's one hold only", mu.Name(), fields, n)
	}
	e.assertNoResidue(t, mu.Name())
}

// assertNoResidue checks that the lock's extra keys (Kind.Residue) are
// gone.
func (e *env) assertNoResidue(t testing.TB, name string) {
	t.Helper()
	if e.k.Residue == nil {
		return
	}
	raw := e.redis(t)
	for _, key := range e.k.Residue(name) {
		if raw.Exists(context.Background(), key).Val() != 0 {
			t.Fatalf("%s left behind", key)
		}
	}
}
