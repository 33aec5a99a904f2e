package clustertest_test

import (
	"context"
	"testing"
	"time"

	"github.com/relock-go/relock/election"
	"github.com/relock-go/relock/internal/testing/redistest"
)

// TestElectionOnCluster: on the 6-node cluster, as the limited ACL user,
// with sharded pub/sub, for an election on each master: candidates on
// three Clients are elected in arrival order with increasing terms, an
// observer on another Client sees every leader, and a resignation hands
// over at once.
func TestElectionOnCluster(t *testing.T) {
	c := needCluster(t)
	bg := context.Background()
	rdb := c.Client(t)
	for master, name := range namesOnEachMaster(t, c, rdb, redistest.Key(t)) {
		t.Run(master, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(bg, wait)
			defer cancel()
			observed, err := election.New(newClient(t, c.LockClient(t), nil), name, nil).Observe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var es []*election.Election
			for range 3 {
				es = append(es, election.New(newClient(t, c.LockClient(t), nil), name, nil))
			}
			first, err := es[0].Campaign(ctx, "0")
			if err != nil {
				t.Fatal(err)
			}
			terms := make(chan int64, 2)
			for i := 1; i < 3; i++ {
				go func() {
					lctx, err := es[i].Campaign(ctx, string(rune('0'+i)))
					if err != nil {
						t.Error(err)
						close(terms)
						return
					}
					term, _ := election.TermOf(lctx)
					terms <- term
				}()
				time.Sleep(50 * time.Millisecond) // arrival order
			}
			last, _ := election.TermOf(first)
			want := []election.Leader{{Value: "0", Term: last}}
			for i := 1; i < 3; i++ {
				if err := es[i-1].Resign(ctx); err != nil {
					t.Fatal(err)
				}
				term, ok := <-terms
				if !ok {
					t.FailNow()
				}
				if term <= last {
					t.Fatalf("term %d after %d", term, last)
				}
				last = term
				l, err := es[i].Leader(ctx)
				if err != nil || l.Value != string(rune('0'+i)) || l.Term != term {
					t.Fatalf("Leader = %+v, %v; want candidate %d in term %d (arrival order)", l, err, i, term)
				}
				want = append(want, l)
			}
			for i, w := range want {
				select {
				case l := <-observed:
					if l != w {
						t.Fatalf("observed leader %d = %+v, want %+v", i, l, w)
					}
				case <-ctx.Done():
					t.Fatalf("observer saw %d of %d leaders", i, len(want))
				}
			}
			if err := es[2].Resign(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}
