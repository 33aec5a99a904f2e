package election_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/relock-go/relock"
	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// srv is the redis-server shared by the package's tests; each test uses
// its own election names.
var srv *redistest.Server

func TestMain(m *testing.M) { redistest.Main(m, runChild, &srv) }

// runChild is a child process's life: campaign in election name at addr
// with the client's and the election's WatchdogTimeout of the given
// milliseconds (0 for the defaults), print the term once elected, and lead until killed.
func runChild(role string, args []string) int {
	if role != "lead" || len(args) != 4 {
		fmt.Fprintln(os.Stderr, "bad child role:", role, args)
		return 2
	}
	var ms [2]time.Duration
	for i, arg := range args[2:] {
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		ms[i] = time.Duration(n) * time.Millisecond
	}
	rdb := redis.NewClient(&redis.Options{Addr: args[0], Username: redistest.LockUser, Password: redistest.LockPassword})
	rc, err := relock.New(rdb, &relock.Options{WatchdogTimeout: ms[0]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	lctx, err := election.New(rc, args[1], &election.Options{WatchdogTimeout: ms[1]}).Campaign(context.Background(), "child")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	term, _ := election.TermOf(lctx)
	fmt.Println(term)
	select {}
}

// newClient returns a relock client on srv with its own go-redis
// client, as if it were a separate process; both close when t ends.
func newClient(t testing.TB, opts *relock.Options) *relock.Client {
	t.Helper()
	return redistest.Relock(t, srv.LockClient(t), opts)
}

// campaignT campaigns or fails the test.
func campaignT(t testing.TB, e *election.Election, ctx context.Context, value string) context.Context {
	t.Helper()
	lctx, err := e.Campaign(ctx, value)
	if err != nil {
		t.Fatalf("Campaign(%s): %v", e.Name(), err)
	}
	return lctx
}

// termT returns a leadership context's term or fails the test.
func termT(t testing.TB, lctx context.Context) int64 {
	t.Helper()
	term, ok := election.TermOf(lctx)
	if !ok {
		t.Fatal("leadership context without a term")
	}
	return term
}
